package finisher

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// NewSpool makes the memory file a recording spools its unwritten capture into for its
// finisher (captured.WriteSpool): anonymous memory (a memfd), never a file on disk, since
// the bytes are not scrubbed yet. It lives while a process holds it.
func NewSpool() (*os.File, error) {
	fd, err := unix.MemfdCreate("acptap-spool", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	return os.NewFile(uintptr(fd), "acptap-spool"), nil
}

// EarlyAlive says whether a finisher SpawnEarly started for m still waits: the read end of
// its pipe is open (a dead one's is closed, and the write end then reports an error). The
// pipes of dead ones are let go.
func (m *Marker) EarlyAlive() bool {
	alive := m.parents[:0]
	for _, w := range m.parents {
		fds := []unix.PollFd{{Fd: int32(w.Fd()), Events: unix.POLLOUT}}
		if n, err := unix.Poll(fds, 0); err == nil && n == 1 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
			w.Close()
			continue
		}
		alive = append(alive, w)
	}
	clear(m.parents[len(alive):])
	m.parents = alive
	return len(alive) > 0
}
