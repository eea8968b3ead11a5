//go:build unix

package spool

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/acptap/acptap/internal/private"
)

// Claim makes this process the spool's sender if no other process is: an
// exclusive, non-blocking flock on <dir>/lock, which the kernel releases
// when the process dies. The returned func releases it.
func (s *Spool) Claim() (release func(), ok bool, err error) {
	f, err := os.OpenFile(filepath.Join(s.dir, "lock"), os.O_CREATE|os.O_RDWR, private.FileMode)
	if err != nil {
		return nil, false, fmt.Errorf("otlp spool lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, false, nil
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, true, nil
}
