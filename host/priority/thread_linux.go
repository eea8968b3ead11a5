package priority

import (
	"fmt"
	"runtime"
	"sync"
	"syscall"
)

// LowerThread locks the calling goroutine to its OS thread for good and
// moves that thread to the nice value target(own), own being its current
// one; lowering is skipped when that is not above own. The goroutine must
// not call runtime.UnlockOSThread: the thread ends with the goroutine, and
// its priority with it (the runtime makes new threads from a clean
// template thread while the current one is locked, so no other thread
// inherits the value).
//
// A lowered thread that the kernel has set aside still holds the Go
// scheduler's P while its goroutine is runnable, which would leave the
// goroutines at the normal priority (the tee's) fewer Ps than CPUs: so
// LowerThread adds one P to GOMAXPROCS for as long as the thread is
// lowered, and release, which the goroutine calls as it returns, takes it
// back. Failing to lower is not fatal: the goroutine is then not locked,
// keeps the normal priority, and the error says why (release is a no-op).
func LowerThread(target func(own int) int) (release func(), err error) {
	runtime.LockOSThread()
	tid := syscall.Gettid()
	own, err := Nice(tid)
	if err == nil && target(own) <= own {
		runtime.UnlockOSThread()
		return func() {}, nil
	}
	if err == nil {
		if serr := syscall.Setpriority(syscall.PRIO_PROCESS, tid, target(own)); serr != nil {
			err = fmt.Errorf("setpriority: %w", serr)
		} else {
			// The default slice (see ShortenSlices); failing that, the tee only preempts
			// this thread a little later.
			_ = setSlice(tid, 0)
		}
	}
	if err != nil {
		runtime.UnlockOSThread()
		return func() {}, err
	}
	extraProcs(+1)
	var once sync.Once
	return func() { once.Do(func() { extraProcs(-1) }) }, nil
}

var procsMu sync.Mutex

// extraProcs changes GOMAXPROCS by d.
func extraProcs(d int) {
	procsMu.Lock()
	defer procsMu.Unlock()
	runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0)+d, 1))
}
