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
	lv := recordV2(t)
	cfg := writeFile(t, filepath.Join(t.TempDir(), "config.toml"), "[plugins.acpv2.config]\npartialEvery = 1\n")
	root := copyTree(t, lv.root)
	out, errOut := mustRebuild(t, "--store", root, "--config", cfg, "--all")
	got := outputs(t, root)

	t.Logf("stderr of the rebuild after the change:\n%s", errOut)
	var stale []string
	for _, l := range strings.Split(errOut, "\n") {
		if strings.Contains(l, "stale session entry") {
			stale = append(stale, l)
		}
	}
	secondConn := strings.TrimSuffix(filepath.Base(lv.wires[1]), ".jsonl")
	if len(stale) != 1 || !strings.Contains(stale[0], `session "`+v2Parent+`"`) || !strings.Contains(stale[0], secondConn) ||
		!strings.Contains(stale[0], "(and 1 later connection)") || !strings.Contains(stale[0], "priorLines") {
		t.Errorf("stale entries reported %d times, want once for %s naming connection %s (and the third):\n%s", len(stale), v2Parent, secondConn, errOut)
	}
	if !strings.Contains(out, "files changed") {
		t.Errorf("no summary:\n%s", out)
	}

	for _, sess := range []string{v2Parent, v2Fork} {
		name := filepath.Join("sessions", sess, "stream.asr.jsonl")
		if lineCount(got[name]) <= lineCount(lv.outputs[name]) {
			t.Errorf("%s: %d lines rebuilt, %d live: partialEvery had no effect", name, lineCount(got[name]), lineCount(lv.outputs[name]))
		}
		missing := missingEntities(lv.outputs[name], got[name])
		if len(missing) > 0 {
			t.Errorf("%s: entities lost by the rebuild: %v", name, missing)
		}
		if o, e, code := acptap(t, "validate", filepath.Join(root, name)); code != 0 {
			t.Errorf("validate %s: exit %d\n%s%s", name, code, o, e)
		}
		aep := filepath.Join("aep", "acp", sess+".jsonl")
		if !bytes.Equal(got[aep], lv.outputs[aep]) {
			t.Errorf("%s changed%s", aep, firstDiff(lv.outputs[aep], got[aep]))
		}
	}
	if len(backups(t, root)) == 0 {
		t.Error("the replaced streams were not kept as .prev- files")
	}

	one := copyTree(t, lv.root)
	mustRebuild(t, "--store", one, "--config", cfg, filepath.Join(one, "wire", filepath.Base(lv.wires[1])))
	sameOutputs(t, "rebuild of the second connection only, after the change", got, outputs(t, one))

	_, errOut = mustRebuild(t, "--store", root, "--all")
	if strings.Contains(errOut, "stale") {
		t.Errorf("stale entries reported with the recording's config:\n%s", errOut)
	}
	sameOutputs(t, "rebuild --all back at the recording's config", lv.outputs, outputs(t, root))
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
