package finisher

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acptap/acptap/host/store"
)

// TestEarlyAlive: a finisher SpawnEarly started counts as alive until it ends, killed or
// not; then EarlyAlive says so (and reaps it).
func TestEarlyAlive(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m, err := Create(st, "c-early")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Release()
	if m.EarlyAlive() {
		t.Fatal("alive before any was started")
	}
	if err := SpawnEarly("/bin/sleep", []string{"60"}, m, nil, nil); err != nil {
		t.Fatal(err)
	}
	pid := m.EarlyPID()
	if !m.EarlyAlive() {
		t.Fatal("a running finisher is not alive")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for zombie(pid) == false && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if m.EarlyAlive() {
		t.Fatal("a killed finisher is still alive")
	}
}

func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return f[0] == "Z"
}
