//go:build unix

package private

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// withUmask runs fn under a umask that would widen (0) or narrow (0o077,
// 0o277) the modes if they were left to it.
func withUmask(t *testing.T, mask int, fn func()) {
	old := syscall.Umask(mask)
	defer syscall.Umask(old)
	fn()
}

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestModesWhateverTheUmask(t *testing.T) {
	for _, mask := range []int{0, 0o077, 0o277} {
		root := t.TempDir()
		withUmask(t, mask, func() {
			dir := filepath.Join(root, "a", "b")
			if err := MkdirAll(dir); err != nil {
				t.Fatal(err)
			}
			for _, d := range []string{filepath.Join(root, "a"), dir} {
				if m := mode(t, d); m != DirMode {
					t.Errorf("umask %o: %s has mode %o, want %o", mask, d, m, DirMode)
				}
			}
			f, err := OpenFile(filepath.Join(dir, "f"), os.O_WRONLY|os.O_CREATE|os.O_APPEND)
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
			if err := WriteFile(filepath.Join(dir, "w"), []byte("x")); err != nil {
				t.Fatal(err)
			}
			if err := WriteFileAtomic(filepath.Join(dir, "atomic"), []byte("x")); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"f", "w", "atomic"} {
				if m := mode(t, filepath.Join(dir, name)); m != FileMode {
					t.Errorf("umask %o: %s has mode %o, want %o", mask, name, m, FileMode)
				}
			}
		})
	}
}

func TestExistingKeepTheirModes(t *testing.T) {
	root := t.TempDir()
	shared := filepath.Join(root, "shared")
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(shared, 0o755)
	if err := MkdirAll(filepath.Join(shared, "store")); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, shared); m != 0o755 {
		t.Errorf("an existing parent was changed to %o", m)
	}
	p := filepath.Join(root, "existing")
	if err := os.WriteFile(p, []byte("old\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, 0o640)
	f, err := OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("new\n"))
	f.Close()
	if m := mode(t, p); m != 0o640 {
		t.Errorf("an existing file was changed to %o", m)
	}
	if b, _ := os.ReadFile(p); string(b) != "old\nnew\n" {
		t.Errorf("content %q: O_APPEND lost", b)
	}
	if _, err := OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL); err == nil {
		t.Error("O_EXCL on an existing file succeeded")
	}
	if err := MkdirAll(filepath.Join(p, "sub")); err == nil {
		t.Error("MkdirAll under a file succeeded")
	}
}
