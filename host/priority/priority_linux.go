package priority

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
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
		} else {
			// The child gets the default slice, not the copy path's (ShortenSlices): a
			// woken tee copier must have the shorter one to preempt it. Failing that,
			// it only preempts a little later.
			_ = setSlice(tid, 0)
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

// LowerSelf moves every thread of this process to Target of its current
// nice value. A process started at the normal priority lowers itself this
// way when its start must not wait (the finisher: record waits for its
// exec, which a child already at nice 10 on a busy machine is slow to
// reach). Threads made later inherit the value from the thread that makes
// them; the walk is repeated until no thread is left at the old value.
func LowerSelf() error {
	own, err := Nice(0)
	if err != nil {
		return err
	}
	target := Target(own)
	for range 4 {
		ents, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return fmt.Errorf("list threads: %w", err)
		}
		changed := false
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if n, err := Nice(tid); err == nil && n < target {
				if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, target); err != nil {
					return fmt.Errorf("setpriority: %w", err)
				}
				_ = setSlice(tid, 0) // see Start
				changed = true
			}
		}
		if !changed {
			return nil
		}
	}
	return nil
}
