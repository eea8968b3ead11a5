package wire

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acptap/acptap/sdk"
)

// TestReuseLinesSameEntries: a reader that reuses its line buffer returns
// the entries a plain reader returns (each looked at before the next call).
func TestReuseLinesSameEntries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.jsonl")
	w, err := Create(path, Header{Connection: "c-r"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 500 {
		line := strings.Repeat(`{"a":"x\"y"}`, i%50+1)
		if i%7 == 0 {
			line = "\xff" + line // b64
		}
		if i%11 == 0 {
			line = strings.Repeat("z", 300<<10) // past the slab's share
		}
		w.Append(Entry{Type: TypeFrame, Dir: sdk.A2C, Line: []byte(line)})
	}
	w.Close()
	a, _ := Open(path)
	b, _ := Open(path)
	b.ReuseLines()
	defer a.Close()
	defer b.Close()
	for n := 0; ; n++ {
		ea, erra := a.Next()
		eb, errb := b.Next()
		if !errors.Is(erra, errb) && (erra == nil) != (errb == nil) {
			t.Fatalf("entry %d: errors %v, %v", n, erra, errb)
		}
		if errors.Is(erra, io.EOF) {
			if n != 500 {
				t.Fatalf("%d entries", n)
			}
			return
		}
		if ea.Seq != eb.Seq || !bytes.Equal(ea.Line, eb.Line) || ea.Dir != eb.Dir || !ea.At.Equal(eb.At) {
			t.Fatalf("entry %d differs", n)
		}
	}
}
