package cli

import (
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
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
	// Close-on-exec in the same call: a child forked between a dup and setting the flag
	// would hold the editor's stdin.
	fd, err := unix.FcntlInt(0, unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return in
	}
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

// releaseStdout ends the editor's stdout pipe by putting /dev/null on
// descriptor 1 rather than closing it: a closed descriptor 1 is the lowest
// free number, so the next file acptap opens (a plugin binary it execs as
// /proc/self/fd/N on a restart, a wire log) would become "stdout", and the
// plugin exec or a stray write would hit the wrong file. Closing is the
// fallback when /dev/null cannot be put there.
func releaseStdout(f *os.File) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err == nil {
		defer null.Close()
		if syscall.Dup3(int(null.Fd()), int(f.Fd()), 0) == nil {
			return
		}
	}
	_ = f.Close()
}
