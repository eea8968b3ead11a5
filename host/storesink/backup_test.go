package storesink

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestPruneBackups: a .prev- copy is kept only when the file it was moved
// aside from now holds other bytes (or is gone).
func TestPruneBackups(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("same.jsonl", "a\nb\n")
	same := write("same.jsonl.prev-1", "a\nb\n")
	write("changed.jsonl", "a\nc\n")
	changed := write("changed.jsonl.prev-2", "a\nb\n")
	write("longer.jsonl", "a\nb\nc\n")
	longer := write("longer.jsonl.prev-3", "a\nb\n")
	gone := write("gone.jsonl.prev-4", "a\n")
	kept := PruneBackups([]string{same, changed, longer, gone})
	if !slices.Equal(kept, []string{changed, longer, gone}) {
		t.Errorf("kept %v", kept)
	}
	if _, err := os.Stat(same); !os.IsNotExist(err) {
		t.Errorf("identical backup not removed: %v", err)
	}
}
