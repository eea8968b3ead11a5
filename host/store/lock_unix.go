//go:build unix

package store

import (
	"errors"
	"os"
	"syscall"
)

// lockRange takes a write lock on byte off of f without waiting.
func lockRange(f *os.File, off int64) (bool, error) {
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: off, Len: 1}
	err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EACCES):
		return false, nil
	}
	return false, err
}
