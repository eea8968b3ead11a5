package tee

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
)

// TestAgentStdinWatchLeaksNoDescriptor: a process started while the tee sets up its
// watch of the agent's stdin (the watchdog is started beside it, the plugins soon after)
// inherits no descriptor of acptap's. The watch holds a duplicate of the pipe's write
// end; had the duplicate been made without close-on-exec at once (dup, then
// FD_CLOEXEC), a child forked in between kept the agent's stdin open for as long as it
// lived: the agent never saw EOF when the editor closed stdin, and acptap, which exits
// with the agent, held the editor until it was killed (the watchdog lives as long as
// acptap). Children are forked in a loop while the watch is set up and stopped again
// and again; each child's descriptors are read from /proc while it runs.
func TestAgentStdinWatchLeaksNoDescriptor(t *testing.T) {
	cat, err := exec.LookPath("cat")
	if err != nil {
		t.Skip("no cat")
	}
	// What every child inherits anyway (descriptors the test binary was given without
	// close-on-exec by whatever started it) is not acptap's doing.
	base := exec.Command(cat)
	baseIn, err := base.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := base.Start(); err != nil {
		t.Fatal(err)
	}
	given := map[string]bool{}
	for _, fd := range inherited(base.Process.Pid) {
		given[fd] = true
	}
	baseIn.Close()
	_ = base.Wait()
	var stop atomic.Bool
	var n atomic.Int64 // children started
	leaks := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			cmd := exec.Command(cat)
			in, err := cmd.StdinPipe() // cat blocks on it: its descriptors stay for us to read
			if err != nil {
				leaks <- err.Error()
				return
			}
			if err := cmd.Start(); err != nil {
				leaks <- err.Error()
				return
			}
			n.Add(1)
			for _, fd := range inherited(cmd.Process.Pid) {
				// A pipe: cat opens files of its own (locale) as it starts, never a pipe.
				if !given[fd] && strings.Contains(fd, "(pipe:") {
					select {
					case leaks <- fd:
					default:
					}
				}
			}
			in.Close()
			_ = cmd.Wait()
		}
	}()
	// Set-ups until enough children have started that some of their forks fall on a
	// set-up (a set-up takes a few microseconds, a child some hundred).
	rounds := 0
	for ; n.Load() < 500 && len(leaks) == 0; rounds++ {
		select {
		case <-done:
			t.Fatal(<-leaks)
		default:
		}
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		watchAgentStdin(w, func() {})()
		w.Close()
		r.Close()
	}
	stop.Store(true)
	<-done
	select {
	case l := <-leaks:
		t.Fatalf("a child started during the agent-stdin watch's set-up inherited %s", l)
	default:
	}
	t.Logf("%d set-ups, %d children started meanwhile", rounds, n.Load())
}

// inherited lists the descriptors above stderr that process pid holds, as "N (target)":
// a child of os/exec gets 0, 1 and 2 only, and what its parent was given to pass on.
func inherited(pid int) []string {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return nil
	}
	var extra []string
	for _, e := range ents {
		switch e.Name() {
		case "0", "1", "2":
			continue
		}
		target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name()))
		extra = append(extra, e.Name()+" ("+target+")")
	}
	return extra
}
