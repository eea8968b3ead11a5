package gofiles

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestWalk(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"a.go", "a_test.go", "sub/b.go", "sub/testdata/c.go", ".git/d.go", "node_modules/e.go", "skipme/f.go", "g.txt"} {
		os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(root, p), []byte("package x\n"), 0o644)
	}
	var got []string
	n, err := Walk(root, func(rel string, dir bool) bool { return dir && rel == "skipme" }, func(rel string, src []byte) error {
		if string(src) != "package x\n" {
			t.Errorf("%s: %q", rel, src)
		}
		got = append(got, rel)
		return nil
	})
	if err != nil || n != 2 || !slices.Equal(got, []string{"a.go", "sub/b.go"}) {
		t.Errorf("Walk = %d %v %v, want a.go and sub/b.go", n, got, err)
	}
}
