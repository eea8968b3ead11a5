package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestAgentTreeEndsWithAcptap: an agent (sh) starts a grandchild that
// ignores SIGTERM and holds the agent's stdout. After acptap record is
// SIGTERMed (the agent exits 42 on it, passed through) and after it is
// SIGKILLed, nothing of the agent's tree is left: the agent runs in its own
// process group, which acptap ends (SIGTERM, then SIGKILL), and which the
// watchdog kills when acptap itself is killed.
func TestAgentTreeEndsWithAcptap(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			store := t.TempDir()
			cmd := exec.Command(acptapBin, "record", "--store", store, "--",
				"sh", "-c", `trap "" TERM; sleep 1000 & g=$!; trap "exit 42" TERM; echo "grandchild $g"; while :; do wait; done`)
			cmd.Stderr = os.Stderr
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil {
				t.Fatalf("agent said %q: %v", line, err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "grandchild ")))
			if err != nil {
				t.Fatalf("agent said %q", line)
			}
			st, err := readStat(pid)
			if err != nil {
				t.Fatal(err)
			}
			grandchild := proc{pid: pid, start: st.start, what: "grandchild"}
			t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
			waitChild(t, cmd.Process.Pid, "watchdog", func(p int) bool {
				b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "cmdline"))
				return strings.Contains(string(b), "__tee-watchdog")
			})
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait()
			if sig == syscall.SIGTERM && exitCode(cmd.ProcessState) != 42 {
				t.Errorf("acptap exited %v; want the agent's 42", err)
			}
			poll(t, "the grandchild to be gone", func() bool { return !grandchild.alive() })
			if sig == syscall.SIGTERM {
				// A finisher may still be writing the store (record exits
				// without waiting for it): the temporary directory goes
				// once it is done.
				waitMapped(t, []string{"--store", store})
			}
		})
	}
}
