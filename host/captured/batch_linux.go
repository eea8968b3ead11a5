package captured

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// writeBuffers writes bufs in order: on a file with writev (repeated for what a short
// write left), otherwise one Write each.
func writeBuffers(w io.Writer, bufs [][]byte) error {
	f, ok := w.(*os.File)
	if !ok {
		return writeEach(w, bufs)
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return writeEach(w, bufs)
	}
	for len(bufs) > 0 {
		var n int
		var werr error
		if err := rc.Write(func(fd uintptr) bool {
			n, werr = unix.Writev(int(fd), bufs)
			return werr != unix.EAGAIN
		}); err != nil {
			return err
		}
		if werr == unix.EINTR {
			continue
		}
		if werr != nil {
			return werr
		}
		for n > 0 && len(bufs) > 0 {
			if n < len(bufs[0]) {
				bufs[0] = bufs[0][n:]
				n = 0
				break
			}
			n -= len(bufs[0])
			bufs = bufs[1:]
		}
		for len(bufs) > 0 && len(bufs[0]) == 0 {
			bufs = bufs[1:]
		}
	}
	return nil
}
