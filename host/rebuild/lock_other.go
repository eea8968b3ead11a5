//go:build !unix

package rebuild

import (
	"errors"
	"fmt"
	"os"

	"github.com/acptap/acptap/internal/private"
)

// lockStore creates <store>/tmp/rebuild.lock exclusively. Without flock a
// rebuild killed here leaves the file behind; remove it by hand then.
func lockStore(path string) (func(), error) {
	f, err := private.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL)
	if errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("another rebuild of this store is running (or one was killed: remove %s)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	return func() { f.Close(); os.Remove(path) }, nil
}
