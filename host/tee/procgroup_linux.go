//go:build linux

package tee

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
)

// The agent's whole process tree ends with acptap. The agent runs in a
// process group of its own (so the group is exactly the agent and what it
// started); signals acptap relays go to the group; when the agent exits,
// what is left of its group gets SIGTERM, then SIGKILL; and when acptap is
// killed outright (SIGKILL, which it cannot catch), Pdeathsig kills the
// agent and a small watchdog process kills the rest of the group.
//
// Why a watchdog: Pdeathsig only reaches the direct child, and a subreaper
// (PR_SET_CHILD_SUBREAPER) dies with acptap too. A cgroup would also catch
// descendants that leave the group (setsid), but needs a delegated cgroup
// v2 subtree, which an editor's child process rarely has. A process that
// left the agent's group on purpose is not followed.

// groupGrace bounds how long the rest of the agent's group has, after
// SIGTERM, before SIGKILL.
var groupGrace = 500 * time.Millisecond

// sysProcAttr puts the agent in a process group of its own and asks the
// kernel to SIGKILL it if we die, even by SIGKILL.
//
// Caveat (golang/go#27505): Linux ties Pdeathsig to the thread that forked, not the process.
// Go threads exit when a goroutine ends while locked with runtime.LockOSThread, which
// acptap's lowered goroutines (capture, the feeders: host/priority) do; so the agent is
// forked from a thread of its own that stays until the agent is reaped (startOnOwnThread),
// and the signal fires only when acptap itself dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// procGroup is the agent's process group and its watchdog.
type procGroup struct {
	pgid     int
	dogReady chan struct{} // closed once the watchdog started (or could not)
	dog      *exec.Cmd
	dogIn    *os.File // closed without "done" when acptap dies: the watchdog then kills the group
	log      hclog.Logger
}

// startGroup follows the group of the agent cmd just started; watchdog,
// when set, makes the watchdog command (see Watchdog), started in the
// background so that the copying starts at once.
func startGroup(cmd *exec.Cmd, watchdog func(pgid int) *exec.Cmd, log hclog.Logger) *procGroup {
	g := &procGroup{pgid: cmd.Process.Pid, log: log, dogReady: make(chan struct{})}
	if watchdog == nil {
		close(g.dogReady)
		return g
	}
	go func() {
		defer close(g.dogReady)
		g.startWatchdog(watchdog)
	}()
	return g
}

func (g *procGroup) startWatchdog(watchdog func(pgid int) *exec.Cmd) {
	log := g.log
	r, w, err := os.Pipe()
	if err != nil {
		log.Warn("no process-group watchdog", "error", err)
		return
	}
	dog := watchdog(g.pgid)
	dog.Stdin, dog.Stdout, dog.Stderr = r, nil, nil
	// Its own group: a signal to acptap's group (a terminal's Ctrl-C, an
	// editor killing the group) must not take it away before it acts.
	dog.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = dog.Start()
	r.Close()
	if err != nil {
		w.Close()
		log.Warn("no process-group watchdog", "error", err)
		return
	}
	g.dog, g.dogIn = dog, w
}

// signal sends s to the agent's whole group.
func (g *procGroup) signal(s os.Signal) error {
	sig, ok := s.(syscall.Signal)
	if !ok {
		return errors.New("not a syscall signal")
	}
	return syscall.Kill(-g.pgid, sig)
}

// cancelAgent is the agent command's Cancel (set before it starts): the
// whole group goes.
func cancelAgent(cmd *exec.Cmd) func() error {
	return func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

// terminate asks what is left of the group, once the agent has exited, to
// end (it may hold the agent's stdout open, which the drain waits for).
func (g *procGroup) terminate() {
	if syscall.Kill(-g.pgid, syscall.SIGTERM) == nil {
		g.log.Debug("agent exited; its process group got SIGTERM", "pgid", g.pgid)
	}
}

// end kills what is still left of the group after groupGrace, then
// releases the watchdog: nothing of the agent outlives acptap.
func (g *procGroup) end() {
	deadline := time.Now().Add(groupGrace)
	for syscall.Kill(-g.pgid, 0) == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if syscall.Kill(-g.pgid, syscall.SIGKILL) == nil {
		g.log.Debug("agent's process group killed", "pgid", g.pgid)
	}
	<-g.dogReady
	if g.dog != nil {
		// Not waited for: the watchdog reads "done" from the pipe and exits
		// whenever it gets the CPU (acptap's exit does not wait for that);
		// it is reaped in the background, or by init once acptap is gone.
		_, _ = g.dogIn.Write([]byte(watchdogDone))
		g.dogIn.Close()
		go func() { _ = g.dog.Wait() }()
	}
}

const watchdogDone = "done\n"

// Watchdog is the body of the watchdog process of the agent's group pgid:
// it reads in (its stdin, a pipe from acptap) until acptap says it is done,
// or until EOF without that, which means acptap is gone: it then kills the
// group. It ignores the signals an editor or a terminal sends acptap.
func Watchdog(pgid int, in io.Reader) int {
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
	b, _ := io.ReadAll(in)
	if string(b) == watchdogDone {
		return 0
	}
	if pgid > 1 {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	return 0
}
