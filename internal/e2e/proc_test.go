package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// proc is a process identified by pid and start time, so that a recycled
// pid is not mistaken for it.
type proc struct {
	pid   int
	start uint64
	what  string
}

type procStat struct {
	ppid  int
	state byte
	start uint64
}

// readStat parses /proc/<pid>/stat (the command name may hold spaces and
// parentheses, so fields are counted after the last ')').
func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("pid %d: malformed stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("pid %d: short stat", pid)
	}
	// f[0] is field 3 (state), f[1] field 4 (ppid), f[19] field 22 (starttime).
	ppid, _ := strconv.Atoi(f[1])
	start, _ := strconv.ParseUint(f[19], 10, 64)
	return procStat{ppid: ppid, state: f[0][0], start: start}, nil
}

// alive reports whether the process still runs (a zombie does not).
func (p proc) alive() bool {
	st, err := readStat(p.pid)
	return err == nil && st.start == p.start && st.state != 'Z' && st.state != 'X'
}

// children lists the live child processes of pid.
func children(pid int) []proc {
	ents, _ := os.ReadDir("/proc")
	var out []proc
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readStat(n)
		if err != nil || st.ppid != pid || st.state == 'Z' {
			continue
		}
		out = append(out, proc{pid: n, start: st.start})
	}
	return out
}

// environ returns a process's environment (nil when it cannot be read).
func environ(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}

func hasEnv(pid int, kv string) bool {
	for _, e := range environ(pid) {
		if e == kv {
			return true
		}
	}
	return false
}

// exe is the binary a process runs.
func exe(pid int) string {
	p, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	return p
}

// builtinPlugin matches the re-executed acptap serving built-in plugin name.
func builtinPlugin(name string) func(int) bool {
	return func(pid int) bool { return hasEnv(pid, "ACPTAP_BUILTIN_PLUGIN="+name) }
}

// externalPlugin matches a process running the plugin binary at path.
func externalPlugin(path string) func(int) bool {
	want, _ := filepath.EvalSymlinks(path)
	return func(pid int) bool { return exe(pid) == want }
}

// helperAgent matches the test binary running as a helper agent.
func helperAgent(mode string) func(int) bool {
	return func(pid int) bool { return hasEnv(pid, helperEnv+"="+mode) }
}

// waitChild polls until parent has a child that match accepts.
func waitChild(t *testing.T, parent int, what string, match func(int) bool) proc {
	t.Helper()
	var found proc
	poll(t, "a child process ("+what+") of pid "+strconv.Itoa(parent), func() bool {
		var ok bool
		found, ok = findChild(parent, match)
		return ok
	})
	found.what = what
	return found
}

// pollDeadline bounds every wait for an event. It is generous: the tests
// never assert on how long anything takes, only that it happens.
const pollDeadline = 60 * time.Second

// poll waits until cond holds, failing the test after pollDeadline.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if err := pollErr(what, cond); err != nil {
		t.Fatal(err)
	}
}

// pollErr is poll for goroutines other than the test's.
func pollErr(what string, cond func() bool) error {
	deadline := time.Now().Add(pollDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// findChild returns parent's child that match accepts, if there is one now.
func findChild(parent int, match func(int) bool) (proc, bool) {
	for _, c := range children(parent) {
		if match(c.pid) {
			return c, true
		}
	}
	return proc{}, false
}
