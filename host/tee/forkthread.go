package tee

import (
	"os/exec"
	"runtime"
)

// startOnOwnThread starts cmd from a goroutine locked to its OS thread, which then stays,
// parked, until hold is closed. A child's Pdeathsig fires when the thread that forked it
// ends, not the process (golang/go#27505), and a goroutine that ends while locked ends its
// thread: the lowered goroutines of capture and the feeders do, on whatever thread they
// locked, which could be the one that forked the agent. A locked thread is this
// goroutine's alone, so the agent's outlives every such goroutine.
func startOnOwnThread(cmd *exec.Cmd, hold <-chan struct{}) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		err := cmd.Start()
		done <- err
		if err == nil {
			<-hold
		}
	}()
	return <-done
}
