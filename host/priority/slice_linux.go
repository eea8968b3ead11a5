package priority

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// CopySlice is the scheduler slice (sched_attr.sched_runtime) of the copy path's
// threads, the kernel's minimum. See ShortenSlices.
const CopySlice = 100_000 // ns

// ShortenSlices gives every thread of this process at the process's own nice
// value the short slice CopySlice; threads made later inherit it from the
// thread that makes them. Lowered threads keep theirs (LowerThread gives them
// the default).
//
// Why: the fair scheduler (EEVDF) lets a running task finish a protected
// slice (1.4 ms here by default) before a woken task of the same class runs,
// whatever their nice values, unless the woken one has the shorter slice. A
// tee copier woken by a line while a plugin or capture holds the CPU would
// wait out that slice; with the shorter slice it preempts at once (in the
// kernel: PREEMPT_SHORT). Only the wake-up order changes: the CPU shares are
// still the nice values'. Failing (an old kernel ignores or refuses
// sched_runtime for a normal task) is not fatal: the slices stay as they are.
func ShortenSlices() error {
	own, err := Nice(0)
	if err != nil {
		return err
	}
	// A thread the runtime makes while a pass runs inherits the slice of the
	// thread that makes it, which the pass may not have reached yet: passes
	// run until one finds every thread done (a few at most).
	for range maxSlicePasses {
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
			if n, err := Nice(tid); err != nil || n != own {
				continue // gone, or lowered
			}
			if cur, err := Slice(tid); err == nil && cur == CopySlice {
				continue
			}
			if err := setSlice(tid, CopySlice); err != nil {
				return err
			}
			changed = true
		}
		if !changed {
			return nil
		}
	}
	return nil
}

// maxSlicePasses bounds ShortenSlices' passes over the threads.
const maxSlicePasses = 4

// Slice returns a thread's scheduler slice in ns (0: the calling thread).
func Slice(tid int) (uint64, error) {
	a, err := unix.SchedGetAttr(tid, 0)
	if err != nil {
		return 0, fmt.Errorf("sched_getattr: %w", err)
	}
	return a.Runtime, nil
}

// setSlice sets a normal thread's slice to ns (0: the kernel's default),
// keeping its policy and nice value.
func setSlice(tid int, ns uint64) error {
	a, err := unix.SchedGetAttr(tid, 0)
	if err != nil {
		return fmt.Errorf("sched_getattr: %w", err)
	}
	if a.Policy != unix.SCHED_NORMAL {
		return nil // a class of its own (batch, idle, real time): left as it is
	}
	a.Runtime = ns
	if err := unix.SchedSetAttr(tid, a, 0); err != nil {
		return fmt.Errorf("sched_setattr: %w", err)
	}
	return nil
}
