package priority

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestStartLowersChild: a process started through Start runs at Target of
// the caller's nice value, and the calling thread keeps its own.
func TestStartLowersChild(t *testing.T) {
	own, err := Nice(0)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "30")
	hold := make(chan struct{})
	defer close(hold)
	reniceErr, err := Start(cmd.Start, hold)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if reniceErr != nil {
		t.Fatalf("renice: %v", reniceErr)
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if got, _ := strconv.Atoi(f[16]); got != Target(own) {
		t.Errorf("child nice = %d, want %d", got, Target(own))
	}
	if n, _ := Nice(0); n != own {
		t.Errorf("the caller's thread is at nice %d now, was %d", n, own)
	}
}

func TestTarget(t *testing.T) {
	for own, want := range map[int]int{0: 10, 5: 10, 10: 11, 18: 19, 19: 19, -5: 10} {
		if got := Target(own); got != want {
			t.Errorf("Target(%d) = %d, want %d", own, got, want)
		}
	}
}
