package tee

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestSignalForwarding: the test binary runs as the tee (Signals on) around a helper agent
// that traps SIGTERM and exits 42. SIGTERM sent to the tee process reaches the agent, and the
// tee exits with the agent's 42 instead of dying itself.
func TestSignalForwarding(t *testing.T) {
	teeIn, _ := pipe(t) // the tee's stdin stays open: it must not wait for it
	fromTee, teeOut := pipe(t)
	cmd := exec.Command(selfExe())
	cmd.Env = append(os.Environ(), "TEE_HELPER=tee", "TEE_AGENT=trapterm")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = teeIn, teeOut, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	teeOut.Close()
	// "ready" means the agent trapped SIGTERM; the tee started relaying before it started it.
	if s := readLine(t, bufio.NewReader(fromTee)); !strings.HasPrefix(s, "ready ") {
		t.Fatalf("agent said %q", s)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 42 {
		t.Fatalf("tee exited with %v; want exit status 42 (the agent's SIGTERM handler)", err)
	}
}
