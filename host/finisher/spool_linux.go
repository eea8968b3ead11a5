package finisher

import (
	"bytes"
	"fmt"
	"os"
	"strconv"

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

// EarlyAlive says whether a finisher SpawnEarly started for m is still running (it is this
// process's child, never waited for until it ends: a dead one is reaped here).
func (m *Marker) EarlyAlive() bool {
	alive := m.early[:0]
	for _, pid := range m.early {
		var ws unix.WaitStatus
		if wpid, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil); wpid == pid || err != nil {
			continue // ended (reaped now), or not ours to wait for
		}
		if exiting(pid) {
			continue // killed: its main thread is gone while the others still exit
		}
		alive = append(alive, pid)
	}
	m.early = alive
	return len(alive) > 0
}

// exiting says whether process pid is a zombie (or dead) by /proc: a killed multi-threaded
// process shows its main thread as a zombie before the kernel reports it to wait.
func exiting(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] == 'Z' || b[i+2] == 'X'
}
