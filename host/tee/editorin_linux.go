package tee

import (
	"io"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// editorIn is the editor's stdin when it came as a pollable *os.File (cli's isolateStdin
// makes a pipe or socket non-blocking, so that closing it releases the editor's pipe at
// once). Read through the runtime's poller, each line the editor wrote woke the thread
// parked in epoll_wait, which then scheduled the copier's goroutine: the same detour
// readBlockingPipe takes off the agent's stdout. editorIn holds its own descriptor of the
// pipe, outside the poller, and the copier waits for the editor's bytes in poll(2) on its
// own thread, which the kernel wakes as it wakes cat. Close stays immediate: a wait in
// progress is ended through a wake pipe and the descriptor is closed as the reader leaves;
// with no read in progress Close closes it at once.
type editorIn struct {
	mu      sync.Mutex
	fd      int    // the editor's pipe (non-blocking)
	wake    [2]int // written by Close to end a wait
	reading bool   // a Read is in poll(2) or read(2) on fd
	closed  bool
}

// takeEditorIn returns in as an editorIn when it is a non-blocking *os.File above the
// standard descriptors; the *os.File is closed (which takes it out of the poller) and the
// editorIn holds a duplicate of its descriptor. Anything else is returned unchanged.
func takeEditorIn(in io.Reader) io.Reader {
	f, ok := in.(*os.File)
	if !ok {
		return in
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return in
	}
	dup, derr := -1, error(nil)
	if err := rc.Control(func(fd uintptr) {
		if fd <= 2 { // the process's own stdio: its number must stay taken
			return
		}
		fl, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		if err != nil || fl&unix.O_NONBLOCK == 0 {
			return // a blocking descriptor is read with read(2) directly already
		}
		// Close-on-exec in the same call (see watchAgentStdin).
		dup, derr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil || derr != nil || dup < 0 {
		return in
	}
	e := &editorIn{fd: dup}
	if err := unix.Pipe2(e.wake[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		unix.Close(dup)
		return in
	}
	_ = f.Close()
	return e
}

// Read waits in poll(2) until the editor's pipe is readable (or Close ends the wait), then
// reads it.
func (e *editorIn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		e.mu.Lock()
		if e.closed {
			e.mu.Unlock()
			return 0, os.ErrClosed
		}
		e.reading = true
		e.mu.Unlock()
		n, err := unix.Read(e.fd, p)
		if err == unix.EAGAIN {
			fds := []unix.PollFd{{Fd: int32(e.fd), Events: unix.POLLIN}, {Fd: int32(e.wake[0]), Events: unix.POLLIN}}
			for {
				if _, perr := unix.Poll(fds, -1); perr != unix.EINTR {
					break
				}
			}
		}
		e.mu.Lock()
		e.reading = false
		if e.closed {
			e.release()
			e.mu.Unlock()
			if n > 0 {
				return n, nil
			}
			return 0, os.ErrClosed
		}
		e.mu.Unlock()
		switch {
		case err == unix.EAGAIN || err == unix.EINTR:
			continue
		case err != nil:
			return 0, &os.PathError{Op: "read", Path: "editor-stdin", Err: err}
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// Close closes the editor's pipe: at once when no Read is in progress, otherwise as the
// Read, woken, leaves.
func (e *editorIn) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	if e.reading {
		_, _ = unix.Write(e.wake[1], []byte{0})
		return nil
	}
	e.release()
	return nil
}

// release closes the descriptors; e.mu is held, closed is set and no Read is in progress.
func (e *editorIn) release() {
	if e.fd >= 0 {
		unix.Close(e.fd)
		unix.Close(e.wake[0])
		unix.Close(e.wake[1])
		e.fd = -1
	}
}
