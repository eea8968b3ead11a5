package replaytest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acptap/acptap/internal/testpeers"
)

// TestReplayCommand: `acptap replay STREAM` writes one session/update
// notification per line on stdout, valid ACP v2, and the loss report on
// stderr (or --report FILE); a session ID is looked up in --store.
func TestReplayCommand(t *testing.T) {
	store, id := demoStore(t)
	stream := streamFile(store, id)
	r := acptap(t, "", "replay", "--store", store, stream)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	out := lines(r.stdout)
	if len(out) < 10 {
		t.Fatalf("%d lines on stdout", len(out))
	}
	c, err := testpeers.NewChecker(testpeers.V2)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range out {
		n := decodeUpdate(t, l)
		if n.Params.SessionID != id {
			t.Errorf("sessionId %q, want %q", n.Params.SessionID, id)
		}
		if err := c.Check(testpeers.Agent, []byte(l)); err != nil {
			t.Errorf("not valid ACP v2: %v\n%s", err, l)
		}
	}
	rep := parseReport(t, r.stderr)
	if rep.Complete || rep.SessionID != id || rep.Updates != len(out) || len(rep.Categories) == 0 || rep.Mode != "semantic" {
		t.Errorf("report = %+v", rep)
	}

	t.Run("session ID, flags after it, --report", func(t *testing.T) {
		report := filepath.Join(t.TempDir(), "report.json")
		r2 := acptap(t, "", "replay", id, "--store", store, "--report", report)
		if r2.code != 0 || r2.stderr != "" {
			t.Fatalf("exit %d, stderr %q", r2.code, r2.stderr)
		}
		if r2.stdout != r.stdout {
			t.Error("replay by session ID differs from replay by path")
		}
		b, err := os.ReadFile(report)
		if err != nil {
			t.Fatal(err)
		}
		if got := parseReport(t, string(b)); got.Updates != rep.Updates {
			t.Errorf("report file = %+v", got)
		}
	})
	t.Run("errors", func(t *testing.T) {
		if r := acptap(t, "", "replay", "--store", store, "no-such-session"); r.code != 1 || !strings.Contains(r.stderr, "no-such-session") {
			t.Errorf("unknown session: exit %d, %q", r.code, r.stderr)
		}
		if r := acptap(t, "", "replay"); r.code != 2 {
			t.Errorf("no argument: exit %d", r.code)
		}
		bad := filepath.Join(t.TempDir(), "bad.asr.jsonl")
		os.WriteFile(bad, []byte("{\"type\":\"message\"}\n"), 0o600)
		if r := acptap(t, "", "replay", "--store", store, bad); r.code != 1 || !strings.Contains(r.stderr, "header") {
			t.Errorf("no header: exit %d, %q", r.code, r.stderr)
		}
	})
}

// TestReplayRunsThePluginOutOfProcess: the replay goes through the plugin
// process the catalog starts: a plugin that fails its checksum cannot
// replay.
func TestReplayRunsThePluginOutOfProcess(t *testing.T) {
	store, id := demoStore(t)
	cfg := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(cfg, []byte("[plugins.acpv2]\nsha256 = \""+strings.Repeat("0", 64)+"\"\n"), 0o600)
	r := acptap(t, "", "replay", "--config", cfg, "--store", store, id)
	if r.code != 1 || !strings.Contains(r.stderr, "checksum") || r.stdout != "" {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}
