package replaytest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acptap/acptap/internal/replay"
	"github.com/acptap/acptap/internal/testpeers"
	"github.com/acptap/acptap/sdk/asr"
)

// TestReplayToV1Command: `acptap replay --to acp-v1` writes ACP v1
// session/update lines (each valid against the v1 schema) through the
// acpv1 plugin out of process, and a loss report with target acp/1 and the
// v1 categories; bad --to values and --from-capture with --to are usage
// errors.
func TestReplayToV1Command(t *testing.T) {
	demo, demoID := demoStore(t)
	for _, sid := range []string{demoID, "sess-every"} {
		report := filepath.Join(t.TempDir(), "report.json")
		r := acptap(t, "", "replay", "--to", "acp-v1", "--report", report, "--store", demo, sid)
		if r.code != 0 {
			t.Fatalf("%s: exit %d: %s", sid, r.code, r.stderr)
		}
		c, err := testpeers.NewChecker(testpeers.V1)
		if err != nil {
			t.Fatal(err)
		}
		out := lines(r.stdout)
		for _, l := range out {
			decodeUpdate(t, l)
			if err := c.Check(testpeers.Agent, []byte(l)); err != nil {
				t.Errorf("%s: not valid ACP v1: %v\n%s", sid, err, l)
			}
		}
		b, _ := os.ReadFile(report)
		rep := parseReport(t, string(b))
		if rep.Target != replay.TargetV1 || rep.SessionID != sid || rep.Updates != len(out) || len(out) == 0 {
			t.Errorf("%s: report target %q session %q updates %d for %d lines", sid, rep.Target, rep.SessionID, rep.Updates, len(out))
		}
		if sid == "sess-every" {
			for _, c := range []string{asr.LossV1Terminals, asr.LossV1Diffs, asr.LossV1TurnState, asr.LossV1ToolStatus, asr.LossPermission} {
				if !rep.Names()[c] {
					t.Errorf("the report does not name %s: %s", c, b)
				}
			}
		}
	}
	// The replayer for v1 is a plugin configured for "acp/1" that claims
	// replay: aep (configured there too) does not.
	if r := acptap(t, "", "replay", "--to", "acp-v1", "--plugin", "aep", everyTypeFixture); r.code != 1 || !strings.Contains(r.stderr, "aep has no replay capability") {
		t.Errorf("--plugin aep: exit %d: %s", r.code, r.stderr)
	}
	// The configuration swaps the v1 replayer like any mapping: the plugin
	// listed first for "acp/1" that claims replay is asked (acpv2 claims
	// replay, and refuses the target).
	cfg := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(cfg, []byte("[revisions]\n\"acp/1\" = [\"acpv2\"]\n"), 0o600)
	if r := acptap(t, "", "replay", "--to", "acp-v1", "--config", cfg, everyTypeFixture); r.code != 1 || !strings.Contains(r.stderr, `replay target "acp/1"`) {
		t.Errorf("acpv2 configured for acp/1: exit %d: %s", r.code, r.stderr)
	}
	if r := acptap(t, "", "replay", "--to", "acp-v3", everyTypeFixture); r.code != 2 {
		t.Errorf("--to acp-v3: exit %d", r.code)
	}
	if r := acptap(t, "", "replay", "--to", "acp-v1", "--from-capture", everyTypeFixture); r.code != 2 {
		t.Errorf("--to acp-v1 --from-capture: exit %d", r.code)
	}
}

// TestRoundtripViaV1Command: `acptap roundtrip --via acp-v1` holds for a
// real recording, the stream with every record type, and the sessions the
// SDK's v1 and v2 agents drove; a bad --via is a usage error.
func TestRoundtripViaV1Command(t *testing.T) {
	demo, demoID := demoStore(t)
	check := func(t *testing.T, args ...string) {
		t.Helper()
		recorded := filepath.Join(t.TempDir(), "recorded.asr.jsonl")
		r := acptap(t, "", append([]string{"roundtrip", "--via", "acp-v1", "-v", "--recorded", recorded}, args...)...)
		if r.code != 0 || !strings.Contains(r.stdout, "the round trip holds (ASR-732)") {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		if v := acptap(t, "", "validate", recorded); v.code != 0 {
			t.Errorf("the recording of the v1 replay is not a valid stream:\n%s%s", v.stdout, v.stderr)
		}
		b, _ := os.ReadFile(recorded)
		if !strings.Contains(string(b), `"plugin":{"name":"acpv1"`) {
			t.Errorf("the replay was not recorded by the acpv1 recorder:\n%.400s", b)
		}
	}
	t.Run("demo", func(t *testing.T) { check(t, "--store", demo, demoID) })
	t.Run("every", func(t *testing.T) {
		check(t, everyTypeFixture)
	})
	t.Run("sdk-v1", func(t *testing.T) {
		store, id := sdkV1Store(t)
		check(t, "--store", store, id)
	})
	t.Run("sdk-v2", func(t *testing.T) {
		store, id := sdkStore(t)
		check(t, "--store", store, id)
	})
	if r := acptap(t, "", "roundtrip", "--via", "acp-v0", everyTypeFixture); r.code != 2 {
		t.Errorf("--via acp-v0: exit %d", r.code)
	}
}
