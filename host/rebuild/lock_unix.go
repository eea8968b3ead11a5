//go:build unix

package rebuild

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/acptap/acptap/internal/private"
)

// lockStore takes <store>/tmp/rebuild.lock, so one rebuild at a time owns
// the staging directories; the kernel drops it when the process dies.
func lockStore(path string) (func(), error) {
	f, err := private.OpenFile(path, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errors.New("another rebuild of this store is running")
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}
