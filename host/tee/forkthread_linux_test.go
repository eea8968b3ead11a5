package tee

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// TestAgentOutlivesEndedThreads (golang/go#27505): the agent is started by a goroutine that
// then locks its thread and ends, ending that thread (as capture's and the feeders' lowered
// goroutines end theirs); the agent, forked from a thread of its own (startOnOwnThread),
// keeps running until that thread is let go. Started with cmd.Start on the ending
// goroutine's thread instead, its Pdeathsig kills it at once.
func TestAgentOutlivesEndedThreads(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = sysProcAttr()
	hold := make(chan struct{})
	started := make(chan error, 1)
	// The starting goroutine must not be on the main thread, which Go parks instead of
	// ending.
	for {
		onMain := make(chan bool, 1)
		go func() {
			runtime.LockOSThread() // this goroutine's thread ends when it returns
			if syscall.Gettid() == os.Getpid() {
				onMain <- true
				return
			}
			onMain <- false
			started <- startOnOwnThread(cmd, hold)
		}()
		if !<-onMain {
			break
		}
	}
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		t.Fatalf("the agent ended when the starting goroutine's thread did: %v", err)
	case <-time.After(500 * time.Millisecond):
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	<-exited
	close(hold)
}
