//go:build unix

package spool

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestSpoolModesWhateverTheUmask: the spool's directories are 0700 and its
// segments 0600 (the store's modes) under a permissive umask.
func TestSpoolModesWhateverTheUmask(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "otlp", "spool")
	s, err := Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(items(1)); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if fi, _ := os.Stat(d); fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v", d, fi.Mode().Perm())
		}
	}
	names, _ := s.list()
	if fi, _ := os.Stat(filepath.Join(dir, names[0])); fi.Mode().Perm() != 0o600 {
		t.Errorf("segment %v", fi.Mode().Perm())
	}
}
