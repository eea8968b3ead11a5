package wire

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acptap/acptap/sdk"
)

// TestBigFramesStreamed: frames above streamAbove are encoded segment by
// segment, byte for byte as appendEntry encodes them whole, and read back
// as they were: plain text, text with escapes across segment ends, mostly
// control characters (base64) and invalid UTF-8.
func TestBigFramesStreamed(t *testing.T) {
	lines := [][]byte{
		[]byte(strings.Repeat("é\"x\\\n", 700000)),
		bytes.Repeat([]byte{1, 2, 'a'}, 600000),
		append(bytes.Repeat([]byte("y"), 2<<20), 0xff, 'z'),
	}
	path := filepath.Join(t.TempDir(), "w.jsonl")
	w, err := Create(path, Header{Connection: "c"})
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	for i, l := range lines {
		e := Entry{Type: TypeFrame, Dir: sdk.A2C, Line: l, NoLF: i == 2}
		if _, err := w.Append(e); err != nil {
			t.Fatal(err)
		}
		e.Seq = uint64(i + 1)
		b, _ := appendEntry(nil, &e)
		want.Write(b)
	}
	w.Close()
	raw, _ := os.ReadFile(path)
	if _, body, _ := bytes.Cut(raw, []byte("\n")); !bytes.Equal(body, want.Bytes()) {
		t.Fatal("streamed encoding differs from appendEntry's")
	}
	if !bytes.Contains(raw, []byte(`"seq":2,"dir":"a2c","b64":"`)) {
		t.Error("a line of control characters is not base64")
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i, l := range lines {
		e, err := r.Next()
		if err != nil || !bytes.Equal(e.Line, l) || e.NoLF != (i == 2) {
			t.Fatalf("entry %d: %v, %d bytes, nolf %v", i+1, err, len(e.Line), e.NoLF)
		}
	}
}
