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
