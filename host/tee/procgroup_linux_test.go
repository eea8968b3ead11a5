package tee

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestGrandchildGoneAfterSIGTERM: the tee (this binary, re-executed, with a
// watchdog) runs an agent that started a child ignoring SIGTERM. SIGTERM to
// the tee reaches the agent (it exits 42, passed through); the grandchild,
// left in the agent's process group, is gone once the tee has exited.
func TestGrandchildGoneAfterSIGTERM(t *testing.T) {
	cmd, grandchild := startGrandparent(t)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 42 {
		t.Fatalf("tee exited with %v; want exit status 42 (the agent's)", err)
	}
	if alive(grandchild) {
		_ = syscall.Kill(grandchild, syscall.SIGKILL)
		t.Fatalf("grandchild %d outlived the tee", grandchild)
	}
}

// TestGrandchildGoneAfterSIGKILL: the tee is SIGKILLed; Pdeathsig takes the
// agent, and the watchdog the rest of its group.
func TestGrandchildGoneAfterSIGKILL(t *testing.T) {
	cmd, grandchild := startGrandparent(t)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline := time.Now().Add(30 * time.Second) // generous: a loaded machine
	for alive(grandchild) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(grandchild, syscall.SIGKILL)
			t.Fatalf("grandchild %d outlived the SIGKILLed tee", grandchild)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// startGrandparent starts the tee around the "grandparent" agent and
// returns it and the grandchild's pid, once the grandchild runs.
func startGrandparent(t *testing.T) (*exec.Cmd, int) {
	t.Helper()
	teeIn, _ := pipe(t)
	fromTee, teeOut := pipe(t)
	cmd := exec.Command(selfExe())
	cmd.Env = append(os.Environ(), "TEE_HELPER=tee", "TEE_AGENT=grandparent")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = teeIn, teeOut, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	teeOut.Close()
	s := readLine(t, bufio.NewReader(fromTee))
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(s, "ready ")))
	if err != nil {
		t.Fatalf("agent said %q", s)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	return cmd, pid
}
