package replay

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestStreamTarget: an ACP v2 replay goes to the draft the stream's header
// names; an ACP v1 replay, and a stream of another source, keep the
// replayer's target; the file is read from its start afterwards.
func TestStreamTarget(t *testing.T) {
	write := func(header string) *os.File {
		p := filepath.Join(t.TempDir(), "s.asr.jsonl")
		if err := os.WriteFile(p, []byte(header+"\n{\"type\":\"state\"}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	a13 := `{"type":"header","producer":{"source":{"format":"acp","formatVersion":"2.0.0-alpha.13"}}}`
	v1 := `{"type":"header","producer":{"source":{"format":"acp","formatVersion":"1"}}}`
	for _, tc := range []struct{ header, def, want string }{
		{a13, "acp/2@2.0.0-alpha.9", "acp/2@2.0.0-alpha.13"},
		{a13, "acp/1", "acp/1"},
		{v1, "acp/2@2.0.0-alpha.9", "acp/2@2.0.0-alpha.9"},
		{`not json`, "acp/2@2.0.0-alpha.9", "acp/2@2.0.0-alpha.9"},
	} {
		f := write(tc.header)
		if got := streamTarget(f, tc.def); got != tc.want {
			t.Errorf("%s with %s: %s, want %s", tc.header, tc.def, got, tc.want)
		}
		if b, _ := io.ReadAll(f); len(b) == 0 || b[0] != tc.header[0] {
			t.Errorf("the file is not at its start afterwards")
		}
	}
}
