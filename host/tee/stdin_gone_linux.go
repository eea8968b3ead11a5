package tee

import (
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// watchAgentStdin calls gone when the agent's end of its stdin pipe is
// closed (the agent closed its stdin, or exited), so that the tee can close
// the editor's stdin at once and the editor's next write fails with EPIPE,
// as it would without acptap (issue 18.3). It polls a duplicate of the pipe's
// write end, which reports POLLERR when no reader is left; stop ends the
// watch and closes the duplicate (call it before closing in, or the agent
// would not see EOF while the duplicate holds the pipe open).
func watchAgentStdin(in *os.File, gone func()) (stop func()) {
	var dup int
	var derr error
	rc, err := in.SyscallConn()
	if err != nil {
		return func() {}
	}
	// Close-on-exec in the same call (F_DUPFD_CLOEXEC), not set after a dup: a process
	// forked in between (the watchdog starts beside this, the plugins soon after) would
	// keep the agent's stdin open for its life, and the agent would never see EOF.
	if err := rc.Control(func(fd uintptr) { dup, derr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0) }); err != nil || derr != nil {
		return func() {}
	}
	var wake [2]int
	if err := unix.Pipe2(wake[:], unix.O_CLOEXEC); err != nil {
		unix.Close(dup)
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fds := []unix.PollFd{{Fd: int32(dup)}, {Fd: int32(wake[0]), Events: unix.POLLIN}}
		for {
			_, err := unix.Poll(fds, -1)
			if err == unix.EINTR {
				continue
			}
			if err != nil || fds[1].Revents != 0 {
				return
			}
			if fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
				gone()
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			unix.Close(wake[1]) // POLLHUP on wake[0] ends the poll
			<-done
			unix.Close(wake[0])
			unix.Close(dup)
		})
	}
}
