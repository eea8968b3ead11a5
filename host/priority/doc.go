// Package priority starts background processes (plugins, the finisher) at a
// lower CPU priority than the process that starts them, so that on a busy
// machine the tee's copy path and capture win the CPU and mapping catches
// up from the wire log.
//
// The priority is the nice value, not a scheduler class: SCHED_IDLE would
// let any other busy process on the machine starve the plugins and the
// finisher indefinitely (an unfinished connection then waits for an idle
// CPU), while nice 10 gives them about a tenth of the weight of a normal
// process and still lets them progress. SCHED_BATCH changes wake-up
// preemption, not the share, so it is not enough on its own.
//
// Linux keeps the nice value per thread and a new process inherits it from
// the thread that forks it; a process cannot lower its nice value again
// without privilege. Start therefore forks from a thread of its own, locked
// to a goroutine, reniced, and destroyed when that goroutine returns (the Go
// runtime creates new threads from a clean template thread when the current
// one is locked, so nothing else inherits the value). The child runs at the
// lower priority from its first instruction, every thread of it.
//
// LowerThread does the same for a goroutine of this process: it locks the
// goroutine to its thread for good and renices that thread, which ends with
// the goroutine. The pipeline runs capture so (at Capture, between the tee
// and the plugins) and its feeders at the plugins' value, each lowered
// thread with one more P in GOMAXPROCS while it lives.
package priority
