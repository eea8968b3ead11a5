//go:build unix

package finisher

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// tryLock takes an exclusive flock on f without waiting. The lock belongs
// to the open file description, so a child that inherits f holds it too.
func tryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("flock: %w", err)
	}
	return true, nil
}

// detach makes a child its own session leader, out of the editor's
// process group and terminal: a signal the editor sends to acptap's group
// does not reach it.
func detach() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
