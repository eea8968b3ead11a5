package replaytest

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/internal/testpeers"
)

// acpxCLI returns the command that runs acpx, the third-party ACP v1
// client pinned in testdata/acpx-replay (installed by `make node-deps`). It
// skips the test when node or acpx is missing (fails in CI).
func acpxCLI(t *testing.T) []string {
	t.Helper()
	skip := t.Skipf
	if os.Getenv("CI") == "true" {
		skip = t.Fatalf
	}
	if _, err := exec.LookPath("node"); err != nil {
		skip("node is not on PATH: the acpx test cannot run")
	}
	cli := filepath.Join(testpeers.ModuleRoot(t), "testdata", "acpx-replay", "node_modules", "acpx", "dist", "cli.js")
	if _, err := os.Stat(cli); err != nil {
		skip("%s is missing: run `make node-deps` to enable the acpx test", cli)
	}
	return []string{"node", cli}
}

// runAcpx runs acpx with a fresh HOME (acpx keeps its sessions there).
func runAcpx(t *testing.T, home string, args ...string) (string, string) {
	t.Helper()
	argv := append(acpxCLI(t), args...)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("acpx %v: %v\nstdout: %s\nstderr: %s", args, err, out.String(), errb.String())
	}
	return out.String(), errb.String()
}

// TestReplayServeAcpx: acpx 0.19.1 (a real ACP v1 client, on the SDK 1.x)
// lists the recorded sessions through `acptap replay --serve` with their
// titles and cwds, and opens one: it loads the session (session/load), and
// the history comes back as every update `acptap replay --to acp-v1`
// sends (but compactions, which acpx does not advertise), before the
// load's answer. `acptap record` between the two keeps
// the wire log that shows it.
func TestReplayServeAcpx(t *testing.T) {
	store, demoID := demoStore(t)
	home, cwd := t.TempDir(), t.TempDir()
	serve := acptapBin + " replay --serve " + store
	out, _ := runAcpx(t, home, "--cwd", cwd, "--format", "json", "--agent", serve, "sessions", "list")
	var list struct {
		Source   string `json:"source"`
		Sessions []struct {
			SessionID string `json:"sessionId"`
			Cwd       string `json:"cwd"`
			Title     string `json:"title"`
			UpdatedAt string `json:"updatedAt"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("acpx sessions list: %v\n%s", err, out)
	}
	got := map[string]string{}
	for _, s := range list.Sessions {
		got[s.SessionID] = s.Title
		if s.Cwd == "" || s.UpdatedAt == "" {
			t.Errorf("listed without cwd or updatedAt: %+v", s)
		}
	}
	if list.Source != "agent" || len(got) != 2 || got["sess-every"] != "Fix x.go and docs" {
		t.Errorf("acpx lists %s", out)
	}
	if _, ok := got[demoID]; !ok {
		t.Errorf("acpx does not list the demo session %s: %s", demoID, out)
	}

	trace := t.TempDir()
	agent := acptapBin + " record --store " + trace + " -- " + serve
	out, _ = runAcpx(t, home, "--cwd", cwd, "--format", "json", "--agent", agent, "sessions", "new", "--resume-session", "sess-every")
	if !strings.Contains(out, `"acpSessionId":"sess-every"`) && !strings.Contains(out, `"acpxSessionId":"sess-every"`) {
		t.Errorf("acpx did not open sess-every: %s", out)
	}
	logs, _ := filepath.Glob(filepath.Join(trace, "wire", "*.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("wire logs: %v", logs)
	}
	// acpx does not advertise session.compaction: the server leaves the
	// compactions out (TestReplayServeV1NoCompaction).
	var want []string
	for _, l := range lines(acptap(t, "", "replay", "--to", "acp-v1", "--store", store, "sess-every").stdout) {
		if !strings.Contains(l, `"sessionUpdate":"compaction_`) {
			want = append(want, l)
		}
	}
	var loadID json.RawMessage
	var updates []string
	answered := false
	for _, f := range wireFrames(t, logs[0]) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion int    `json:"protocolVersion"`
				SessionID       string `json:"sessionId"`
			} `json:"params"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(f.Line), &m); err != nil {
			t.Fatalf("wire line: %v: %s", err, f.Line)
		}
		switch {
		case m.Method == "initialize" && m.Params.ProtocolVersion != 1:
			t.Errorf("acpx asked for protocolVersion %d", m.Params.ProtocolVersion)
		case m.Method == "session/load":
			loadID = m.ID
			if m.Params.SessionID != "sess-every" {
				t.Errorf("acpx loaded %s", m.Params.SessionID)
			}
		case m.Method == "session/update" && loadID != nil && !answered:
			updates = append(updates, f.Line)
		case f.Dir == "a2c" && loadID != nil && string(m.ID) == string(loadID):
			answered = m.Result != nil
		}
	}
	if loadID == nil || !answered {
		t.Fatalf("acpx did not load the session (session/load %s, answered %v)", loadID, answered)
	}
	if len(updates) != len(want) {
		t.Errorf("acpx got %d updates before the load's answer, the v1 replay has %d", len(updates), len(want))
	}
	for i := range min(len(updates), len(want)) {
		if updates[i] != want[i] {
			t.Errorf("update %d differs:\n got  %s\n want %s", i, updates[i], want[i])
			break
		}
	}
}
