package priority

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"testing"
)

// TestShortenSlices: after ShortenSlices every thread of the process at its
// nice value has the copy path's slice, and so has a thread made afterwards;
// a thread lowered afterwards (capture, the feeders) and a process started
// through Start (a plugin) have the kernel's default, so that a woken copier
// preempts them.
func TestShortenSlices(t *testing.T) {
	def, err := Slice(0)
	if err != nil {
		t.Fatal(err)
	}
	if def == CopySlice {
		t.Skip("the test process already runs with the copy path's slice")
	}
	if err := ShortenSlices(); err != nil {
		t.Fatal(err)
	}
	if s, _ := Slice(0); s != CopySlice {
		t.Skipf("kernel keeps no slice per task (reads back %d ns)", s)
	}
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	own, _ := Nice(0)
	for _, e := range ents {
		tid, _ := strconv.Atoi(e.Name())
		if n, err := Nice(tid); err != nil || n != own {
			continue // lowered by an earlier test: not the copy path's
		}
		if s, err := Slice(tid); err == nil && s != CopySlice {
			t.Errorf("thread %d: slice %d ns, want %d", tid, s, CopySlice)
		}
	}

	// A new thread inherits it.
	got := make(chan uint64)
	go func() {
		runtime.LockOSThread() // a thread of its own, gone when this returns
		go func() {            // made while this one is locked: from the template thread
			runtime.LockOSThread()
			s, _ := Slice(0)
			got <- s
		}()
		s, _ := Slice(0)
		got <- s
	}()
	for range 2 {
		if s := <-got; s != CopySlice {
			t.Errorf("a later thread: slice %d ns, want %d", s, CopySlice)
		}
	}

	// A lowered thread gets the default.
	lowered := make(chan uint64)
	go func() {
		release, err := LowerThread(func(own int) int { return own + 2 })
		defer release()
		if err != nil {
			t.Error(err)
		}
		s, _ := Slice(0)
		lowered <- s
	}()
	if s := <-lowered; s != def {
		t.Errorf("lowered thread: slice %d ns, want the default %d", s, def)
	}

	// So does a child started through Start.
	cmd := exec.Command("sleep", "30")
	hold := make(chan struct{})
	defer close(hold)
	if _, err := Start(cmd.Start, hold); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if s, err := Slice(cmd.Process.Pid); err != nil || s != def {
		t.Errorf("child: slice %d ns (%v), want the default %d", s, err, def)
	}
	if s, _ := Slice(syscall.Gettid()); s != CopySlice {
		t.Errorf("the caller's thread: slice %d ns, want %d", s, CopySlice)
	}
}
