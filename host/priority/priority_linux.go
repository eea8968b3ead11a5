package priority

import (
	"fmt"
	"runtime"
	"syscall"
)

// Supported says whether Start lowers the priority on this system.
const Supported = true

// Start runs start (which forks the background process) on a fresh OS
// thread whose nice value is Target(own); the process start forks inherits
// it. The thread stays, blocked, until hold is closed (nil: it ends at
// once): a child started with Pdeathsig is signalled when the thread that
// forked it ends, not the process, so a plugin's thread must outlive the
// plugin. It returns start's error last; failing to renice is not fatal (the
// process still starts, at the normal priority) and is returned first.
func Start(start func() error, hold <-chan struct{}) (reniceErr, err error) {
	type result struct{ err, renice error }
	done := make(chan result, 1)
	go func() {
		// Never unlocked: the thread exits with this goroutine, so its nice
		// value dies with it.
		runtime.LockOSThread()
		tid := syscall.Gettid()
		var r result
		if own, gerr := Nice(tid); gerr != nil {
			r.renice = gerr
		} else if serr := syscall.Setpriority(syscall.PRIO_PROCESS, tid, Target(own)); serr != nil {
			r.renice = fmt.Errorf("setpriority: %w", serr)
		}
		r.err = start()
		done <- r
		if hold != nil {
			<-hold
		}
	}()
	r := <-done
	return r.renice, r.err
}

// Nice returns the nice value of a thread (or process) id; 0 means the
// calling thread.
func Nice(id int) (int, error) {
	// The raw syscall returns 20-nice (1…40), so that no valid value is
	// negative.
	p, err := syscall.Getpriority(syscall.PRIO_PROCESS, id)
	if err != nil {
		return 0, fmt.Errorf("getpriority: %w", err)
	}
	return 20 - p, nil
}
