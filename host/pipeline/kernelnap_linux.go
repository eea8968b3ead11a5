package pipeline

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// kernelNap lets capture's naps sleep in the kernel, on its own (locked, lowered) thread,
// instead of parking on a Go timer: a timer nap wakes the thread in epoll_wait to re-arm its
// timeout (netpollBreak), wakes it again when it expires, and hands the goroutine back to its
// locked thread (startlockedm) — some four switches a nap. A kernel nap is ppoll(2) on a
// pipe whose write end Hurry and StopCapture close, so they end it at once as they end a
// timer nap. Only capture sleeps on it; wake may come from any goroutine.
type kernelNap struct {
	mu   sync.Mutex
	r, w int // w is -1 once woken
}

// newKernelNap returns nil when the pipe cannot be made (capture naps on its timer then).
func newKernelNap() *kernelNap {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		return nil
	}
	return &kernelNap{r: p[0], w: p[1]}
}

// sleep returns after d, or at once when wake was called (before or during).
func (k *kernelNap) sleep(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	fds := []unix.PollFd{{Fd: int32(k.r), Events: unix.POLLIN}}
	for {
		start := time.Now()
		if _, err := unix.Ppoll(fds, &ts, nil); err != unix.EINTR {
			return
		}
		if d -= time.Since(start); d <= 0 {
			return
		}
		ts = unix.NsecToTimespec(int64(d))
	}
}

// wake ends the sleep in progress and every later one (POLLHUP on the read end).
func (k *kernelNap) wake() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.w >= 0 {
		unix.Close(k.w)
		k.w = -1
	}
}

// close releases the pipe; the sleeper calls it once it sleeps no more.
func (k *kernelNap) close() {
	k.wake()
	unix.Close(k.r)
}
