package captured

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// mapArena makes a memory file of size bytes (no pages until written: a large queue costs
// nothing until a burst fills it) and maps it.
func mapArena(size int64) (*os.File, []byte, func(off, n int64) error, error) {
	fd, err := unix.MemfdCreate("acptap-queue", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("queue arena: %w", err)
	}
	f := os.NewFile(uintptr(fd), "acptap-queue")
	if err := unix.Ftruncate(fd, size); err != nil {
		f.Close()
		return nil, nil, nil, fmt.Errorf("queue arena: %w", err)
	}
	mem, err := unix.Mmap(fd, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		f.Close()
		return nil, nil, nil, fmt.Errorf("queue arena: %w", err)
	}
	// No access history for these pages: unmapping them (acptap's exit, with a backlog
	// resident) then does not mark each one accessed on the page LRU, which was most of
	// the process's teardown after a large burst (docs/benchmarks-history.md, the sixth round).
	_ = unix.Madvise(mem, unix.MADV_SEQUENTIAL)
	punch := func(off, n int64) error {
		return unix.Fallocate(fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n)
	}
	return f, mem, punch, nil
}

// UnmapArena unmaps what MapArenaFile mapped; nothing may use it after.
func UnmapArena(mem []byte) error { return unix.Munmap(mem) }

// MapArenaFile maps an arena's memory file read-only (the finisher's view of the slots a
// spool refers to). The mapping lives as long as the process.
func MapArenaFile(f *os.File) ([]byte, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("queue arena: %w", err)
	}
	if st.Size() == 0 {
		return nil, nil
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("queue arena: %w", err)
	}
	return mem, nil
}

const defaultQueueBytes = 256 << 20 // see DefaultQueueBytes
