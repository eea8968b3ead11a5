package private

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Modes of everything acptap creates.
const (
	DirMode  fs.FileMode = 0o700
	FileMode fs.FileMode = 0o600
)

// MkdirAll creates dir and its missing parents with DirMode, chmodding each
// directory it creates so the umask has no say. Existing directories are
// left as they are (a store under a shared parent keeps its parent's mode).
func MkdirAll(dir string) error {
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("%s: not a directory", dir)
		}
		return nil
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := MkdirAll(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, DirMode); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil // made concurrently by someone else: not ours to chmod
		}
		return err
	}
	return os.Chmod(dir, DirMode)
}

// OpenFile is os.OpenFile with FileMode. A file the call creates is
// chmodded to FileMode, so the umask has no say; an existing file keeps its
// mode (Chmod says so where a caller wants it tightened).
func OpenFile(path string, flag int) (*os.File, error) {
	if flag&os.O_CREATE == 0 {
		return os.OpenFile(path, flag, FileMode)
	}
	for range 3 { // a file removed between the two opens: try again
		f, err := os.OpenFile(path, flag|os.O_EXCL, FileMode)
		if err == nil {
			if err := f.Chmod(FileMode); err != nil {
				f.Close()
				return nil, err
			}
			return f, nil
		}
		if flag&os.O_EXCL != 0 || !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		if f, err = os.OpenFile(path, flag&^os.O_CREATE, FileMode); !errors.Is(err, fs.ErrNotExist) {
			return f, err
		}
	}
	return os.OpenFile(path, flag, FileMode)
}

// Chmod sets an open file to FileMode (a file that existed before, now
// written by acptap).
func Chmod(f *os.File) error { return f.Chmod(FileMode) }

// WriteFile writes data to path, creating it with FileMode (as OpenFile)
// or truncating it.
func WriteFile(path string, data []byte) error {
	f, err := OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// WriteFileAtomic replaces path with data (FileMode) through a temporary
// file in the same directory, synced, and a rename: a reader sees the old
// bytes or the new, never a part.
func WriteFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(FileMode)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(name, path)
	}
	if err != nil {
		os.Remove(name)
	}
	return err
}
