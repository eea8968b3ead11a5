//go:build !linux

package captured

import (
	"errors"
	"os"
)

func mapArena(int64) (*os.File, []byte, func(off, n int64) error, error) {
	return nil, nil, nil, errors.New("queue arena: memory files are Linux only")
}

// UnmapArena is Linux only.
func UnmapArena([]byte) error { return errors.New("queue arena: memory files are Linux only") }

// MapArenaFile is Linux only.
func MapArenaFile(*os.File) ([]byte, error) {
	return nil, errors.New("queue arena: memory files are Linux only")
}

const defaultQueueBytes = 64 << 20 // see DefaultQueueBytes
