package term

import (
	"bytes"
	"testing"
)

// TestTermSafeSplitWrites feeds the sanitiser one byte at a time: a token,
// a multi-byte rune and an invalid byte split across writes come out as
// when written at once.
func TestTermSafeSplitWrites(t *testing.T) {
	var whole, split bytes.Buffer
	tw, tok := newTermSafe(&whole, true)
	in := []byte(tok + "31mré\u202e\xff\x1b[0m" + tok + "0m\x1b")
	tw.Write(in)
	tw.Flush()
	ts, _ := newTermSafe(&split, true)
	ts.token = tw.token
	for i := range in {
		ts.Write(in[i : i+1])
	}
	ts.Flush()
	want := "\x1b[31mré<U+202E><xFF>^[[0m\x1b[0m^["
	if whole.String() != want || split.String() != want {
		t.Errorf("whole %q, split %q, want %q", whole.String(), split.String(), want)
	}
}
