package tee

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAgentDiesWhenTeeIsKilled: the tee (this binary, re-executed) is SIGKILLed, which it
// cannot catch; the agent — which ignores stdin EOF and waits only for SIGTERM — dies anyway
// through Pdeathsig.
func TestAgentDiesWhenTeeIsKilled(t *testing.T) {
	teeIn, _ := pipe(t)
	fromTee, teeOut := pipe(t)
	cmd := exec.Command(selfExe())
	cmd.Env = append(os.Environ(), "TEE_HELPER=tee", "TEE_AGENT=trapterm")
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
	cmd.Process.Kill()
	cmd.Wait()
	for alive(pid) { // no deadline here: go test's -timeout is the bound
		time.Sleep(5 * time.Millisecond)
	}
}

// alive reports whether pid exists and is not a zombie (a container's init may not reap).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}
