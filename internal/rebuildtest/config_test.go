package rebuildtest

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestRebuildAfterConfigChange is the remapping a user does after changing
// a plugin's config: three connections of one ACP v2 session (and a fork)
// recorded through `acptap record` with the SDK peers, then
// [plugins.acpv2.config] partialEvery = 1, which makes every connection
// map to more lines than its successors' session entries counted. `rebuild
// --all` keeps every entity of every connection (nothing of the earlier
// connections is cut), every stream validates, the stale entries are
// reported once per session, and the AEP files, which the change does not
// touch, are unchanged. A rebuild of only the second connection's wire log
// gives the same result (the session is re-derived from all its
// connections). Back to the default config, `rebuild --all` is byte for
// byte the live recording again.
func TestRebuildAfterConfigChange(t *testing.T) {
	needBin(t)
	for _, tc := range []struct {
		name, plugin string
		record       func(testing.TB) *live
		sessions     []string
		later        string // what the stale report says of the connections after the first stale one
	}{
		{"v2-resume-fork", "acpv2", recordV2, []string{v2Parent, v2Fork}, " (and 1 later connection)"},
		{"v1-load", "acpv1", recordV1, []string{v1Sess}, ":"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lv := tc.record(t)
			cfg := writeFile(t, filepath.Join(t.TempDir(), "config.toml"), "[plugins."+tc.plugin+".config]\npartialEvery = 1\n")
			root := copyTree(t, lv.root)
			out, errOut := mustRebuild(t, "--store", root, "--config", cfg, "--all")
			got := outputs(t, root)

			var stale []string
			for _, l := range strings.Split(errOut, "\n") {
				if strings.Contains(l, "stale session entry") {
					stale = append(stale, l)
				}
			}
			secondConn := strings.TrimSuffix(filepath.Base(lv.wires[1]), ".jsonl")
			if len(stale) != 1 || !strings.Contains(stale[0], `session "`+tc.sessions[0]+`": stale session entry`+tc.later) ||
				!strings.Contains(stale[0], "connection "+secondConn) || !strings.Contains(stale[0], "priorLines") {
				t.Errorf("stale entries reported %d times, want once for %s naming connection %s:\n%s", len(stale), tc.sessions[0], secondConn, errOut)
			}
			if !strings.Contains(out, "files changed") {
				t.Errorf("no summary:\n%s", out)
			}
			checkComplete(t, lv.outputs, root, got, tc.sessions)
			if len(backups(t, root)) == 0 {
				t.Error("the replaced streams were not kept as .prev- files")
			}

			one := copyTree(t, lv.root)
			mustRebuild(t, "--store", one, "--config", cfg, filepath.Join(one, "wire", filepath.Base(lv.wires[1])))
			sameOutputs(t, "rebuild of the second connection only, after the change", got, outputs(t, one))

			// Without session entries there is nothing to be stale; the
			// result is as complete as what those logs give at the
			// recording's config.
			files, _ := stripSessions(t, lv.wires)
			ref := filepath.Join(t.TempDir(), "bare-ref")
			mustRebuild(t, append([]string{"--store", ref}, files...)...)
			bare := filepath.Join(t.TempDir(), "bare")
			_, errOut = mustRebuild(t, append([]string{"--store", bare, "--config", cfg}, files...)...)
			if strings.Contains(errOut, "stale") {
				t.Errorf("stale entries reported for logs without session entries:\n%s", errOut)
			}
			checkComplete(t, outputs(t, ref), bare, outputs(t, bare), tc.sessions)

			_, errOut = mustRebuild(t, "--store", root, "--all")
			if strings.Contains(errOut, "stale") {
				t.Errorf("stale entries reported with the recording's config:\n%s", errOut)
			}
			sameOutputs(t, "rebuild --all back at the recording's config", lv.outputs, outputs(t, root))
		})
	}
}

// checkComplete: each session's stream has more lines than want's (the
// change took effect), every entity of want's, and validates; the AEP
// file, which partialEvery does not touch, has as many events.
func checkComplete(t *testing.T, want map[string][]byte, root string, got map[string][]byte, sessions []string) {
	t.Helper()
	for _, sess := range sessions {
		name := filepath.Join("sessions", sess, "stream.asr.jsonl")
		if lineCount(got[name]) <= lineCount(want[name]) {
			t.Errorf("%s: %d lines rebuilt, %d live: partialEvery had no effect", name, lineCount(got[name]), lineCount(want[name]))
		}
		if missing := missingEntities(want[name], got[name]); len(missing) > 0 {
			t.Errorf("%s: entities lost by the rebuild: %v", name, missing)
		}
		if o, e, code := acptap(t, "validate", filepath.Join(root, name)); code != 0 {
			t.Errorf("validate %s: exit %d\n%s%s", name, code, o, e)
		}
		aep := filepath.Join("aep", "acp", sess+".jsonl")
		if lineCount(got[aep]) != lineCount(want[aep]) {
			t.Errorf("%s: %d events rebuilt, %d live", aep, lineCount(got[aep]), lineCount(want[aep]))
		}
	}
}

// entityKeys are the record members that name an entity (ASR-717's list).
var entityKeys = []string{"messageId", "callId", "planId", "compactionId", "terminalId", "requestId"}

// missingEntities lists the entities (type:key=id) of stream a absent from b.
func missingEntities(a, b []byte) []string {
	have := entities(b)
	var out []string
	for e := range entities(a) {
		if !have[e] {
			out = append(out, e)
		}
	}
	sort.Strings(out)
	return out
}

func entities(stream []byte) map[string]bool {
	out := map[string]bool{}
	for _, line := range bytes.Split(stream, []byte("\n")) {
		var r map[string]any
		if json.Unmarshal(line, &r) != nil {
			continue
		}
		for _, k := range entityKeys {
			if id, ok := r[k].(string); ok {
				out[r["type"].(string)+":"+k+"="+id] = true
			}
		}
	}
	return out
}
