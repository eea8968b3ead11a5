package store

import (
	"os"
	"testing"
)

// TestStreamWriterRelease: a released writer holds no descriptor and
// reopens its file for the next line, which lands after the others.
func TestStreamWriterRelease(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w, _, err := st.OpenStream("s")
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range []string{`{"a":1}`, `{"b":2}`, `{"c":3}`} {
		if err := w.WriteLine([]byte(line)); err != nil {
			t.Fatal(err)
		}
		if err := w.Release(); err != nil || w.Open() {
			t.Fatalf("line %d: release: %v, open %v", i, err, w.Open())
		}
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(st.StreamPath("s"))
	if string(b) != "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n" || w.Lines() != 3 {
		t.Errorf("file %q, %d lines", b, w.Lines())
	}
	if err := w.WriteLine([]byte(`{"d":4}`)); err == nil {
		t.Error("a closed writer reopened")
	}
}
