package storesink

import (
	"os"
	"path/filepath"
	"testing"

	hclog "github.com/hashicorp/go-hclog"
)

// TestTruncateLines: a file is cut back to its first n lines, a torn tail
// included; a missing file stays missing; a shorter file is left alone.
func TestTruncateLines(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "a\nb\n"},
		{"a\nb\ntorn", 2, "a\nb\n"},
		{"a\nb\n", 0, ""},
		{"a\n", 3, "a\n"},
	} {
		if err := os.WriteFile(p, []byte(tc.in), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := truncateLines(p, tc.n, hclog.NewNullLogger()); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(p); string(b) != tc.want {
			t.Errorf("truncateLines(%q, %d) left %q, want %q", tc.in, tc.n, b, tc.want)
		}
	}
	missing := filepath.Join(dir, "none")
	if err := truncateLines(missing, 1, hclog.NewNullLogger()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("a missing file was created: %v", err)
	}
}
