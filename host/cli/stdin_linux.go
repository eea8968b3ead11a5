package cli

import (
	"io"
	"os"
	"syscall"
)

// isolateStdin keeps the editor's stdin for the tee alone. Child processes
// started with os.Stdin — go-plugin starts every plugin that way — would
// otherwise share the editor's pipe and could read bytes meant for the
// agent. The pipe moves to a new descriptor that only the tee reads, and
// descriptor 0 becomes /dev/null. Anything but the process's own stdin is
// returned unchanged.
func isolateStdin(in io.Reader) io.Reader {
	f, ok := in.(*os.File)
	if !ok || f.Fd() != 0 {
		return in
	}
	fd, err := syscall.Dup(0)
	if err != nil {
		return in
	}
	syscall.CloseOnExec(fd)
	// A pipe or socket is made non-blocking, so the returned file is
	// pollable and closing it (the tee does when the agent's stdin is gone)
	// releases the editor's pipe at once, even under a pending read: the
	// editor's next write fails with EPIPE. Only this process reads that end
	// (descriptor 0 is /dev/null from here on), so no one else sees the
	// flag; a terminal or a file, which may be shared, is left as it is.
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) == nil && (st.Mode&syscall.S_IFMT == syscall.S_IFIFO || st.Mode&syscall.S_IFMT == syscall.S_IFSOCK) {
		_ = syscall.SetNonblock(fd, true)
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		syscall.Close(fd)
		return in
	}
	defer null.Close()
	if err := syscall.Dup3(int(null.Fd()), 0, 0); err != nil {
		syscall.Close(fd)
		return in
	}
	return os.NewFile(uintptr(fd), "editor-stdin")
}
