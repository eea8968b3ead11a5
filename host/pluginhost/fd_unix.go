//go:build unix

package pluginhost

import (
	"os"

	"golang.org/x/sys/unix"
)

// aboveStdio moves f to a descriptor of 3 or more. The plugin is exec'd as
// /proc/self/fd/N, and the child resolves that path after its own
// descriptors 0–2 are set up: an N of 0, 1 or 2 (free in this process
// because the editor's stdin or stdout was closed) would name the child's
// stdin, stdout or stderr instead of the binary. f is returned unchanged
// if it cannot be moved (then the exec fails with a clear error, never
// runs something else: the path is checked against the hash's file).
func aboveStdio(f *os.File) *os.File {
	if f.Fd() > 2 {
		return f
	}
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return f
	}
	g := os.NewFile(uintptr(fd), f.Name())
	_ = f.Close()
	return g
}
