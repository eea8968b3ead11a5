package thirdparty

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAcpxDrivesExampleAgent: acpx 0.1.15 (a third-party ACP v1 client on
// SDK 0.14) runs `acptap record -- acptap __example-agent` as its agent and
// has one prompt answered (`acpx exec`, permissions approved). The example
// agent negotiates ACP v1 with it; acpx exits 0; what acpx saw (its JSON
// output is every message it sent and received) is the wire log's frames,
// byte for byte; the recorded stream is valid, names the example agent and
// ACP v1, and show has the agent's answer.
func TestAcpxDrivesExampleAgent(t *testing.T) {
	dir := peersDir(t, "acpx")
	store, home, cwd := t.TempDir(), t.TempDir(), t.TempDir()
	agent := strings.Join([]string{acptapBin, "record", "--store", store, "--", acptapBin, "__example-agent"}, " ")
	cmd := exec.Command(filepath.Join(dir, "node_modules", ".bin", "acpx"), "--agent", agent, "--approve-all",
		"--format", "json", "--cwd", cwd, "--timeout", "120", "exec", "fix the typo in the greeting")
	cmd.Env = append(os.Environ(), "HOME="+home) // acpx keeps its state under HOME
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("acpx: %v\nstderr:\n%s", err, errb.String())
	}
	_, _, _, lines := wireOf(t, store)
	seen := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if strings.Join(seen, "\n") != strings.Join(lines, "\n") {
		t.Errorf("acpx saw other bytes than the wire log holds\nacpx:\n%s\nwire:\n%s", strings.Join(seen, "\n"), strings.Join(lines, "\n"))
	}
	if !strings.Contains(lines[0], `"protocolVersion":1`) || !strings.Contains(lines[1], `"protocolVersion":1`) {
		t.Errorf("not ACP v1: %s / %s", lines[0], lines[1])
	}
	// acpx ends its agent 100 ms after closing its stdin with SIGTERM, and
	// 1.5 s later with SIGKILL; on a loaded machine acptap may not have
	// finished mapping by then. The wire log is complete either way (checked
	// above); a killed recording is rebuilt from it, as a user would.
	if !finished(t, store) {
		t.Log("acpx killed acptap record before the recording finished; rebuilding the session from its wire log")
		wirePath, _, _, _ := wireOf(t, store)
		if o, e, code := run(t, "rebuild", "--store", store, wirePath); code != 0 {
			t.Fatalf("acptap rebuild: exit %d\n%s%s", code, o, e)
		}
	}
	validStreams(t, store)
	ss := listSessions(t, store)
	if len(ss.Sessions) != 1 {
		t.Fatalf("sessions %+v", ss)
	}
	s := ss.Sessions[0]
	if !strings.HasSuffix(s.Agent, "acptap-example-agent") || s.Revision != "acp 1" || s.Turns != 1 || s.Failures != 0 {
		t.Errorf("session %+v", s)
	}
	show, errs, code := run(t, "show", "--store", store, s.ID)
	if code != 0 || !strings.Contains(show, "the tests pass") || !strings.Contains(show, "fix the typo in the greeting") {
		t.Errorf("acptap show: exit %d\n%s%s", code, show, errs)
	}
}
