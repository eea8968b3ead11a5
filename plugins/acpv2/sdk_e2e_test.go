package acpv2_test

// The real thing: the official npm SDK's v2 peers (testdata/sdk) through
// the real tee (`acptap record`), over two connections: a session in
// "everything" mode, then a second connection that resumes it with history
// replay, prompts it again, forks it, resumes the fork with replay and
// prompts the fork. Each stream is checked record by record, and by
// `acptap validate`.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acptap/acptap/internal/testpeers"
)

// acptapBin is the acptap binary TestMain builds for the SDK test.
var (
	acptapBin   string
	acptapBuild error
)

const sdkTest = "TestSDKV2RecordResumeFork"

func TestMain(m *testing.M) {
	os.Exit(testpeers.RunBuilding(m, sdkTest, &acptapBin, &acptapBuild))
}

// record is one stream record, decoded.
type record map[string]any

func (r record) s(k string) string { v, _ := r[k].(string); return v }

// readStream reads a stream file: the header, then the records.
func readStream(t *testing.T, path string) (record, []record) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var all []record
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		all = append(all, r)
	}
	if len(all) == 0 || all[0].s("type") != "header" {
		t.Fatalf("%s: no header", path)
	}
	return all[0], all[1:]
}

// entityKey names the entity a record belongs to.
func entityKey(r record) string {
	for _, k := range []string{"messageId", "callId", "planId", "terminalId", "compactionId", "requestId", "childSession"} {
		if v := r.s(k); v != "" {
			if k == "messageId" && strings.HasPrefix(v, "notice:") {
				return k + "=notice:…" // derived from a wire seq
			}
			return k + "=" + v
		}
	}
	if c, ok := r["cause"].(map[string]any); ok {
		return fmt.Sprint("cause=", c["callId"])
	}
	switch {
	case r.s("state") != "":
		return "state=" + r.s("state")
	case r.s("localThroughId") != "":
		return "localThroughId=" + r.s("localThroughId")
	case r["lossy"] != nil:
		b, _ := json.Marshal(r["lossy"])
		return "lossy=" + string(b)
	}
	return ""
}

// shape renders a stream without its times and frame numbers: one line per
// record with its id, type, entity, supersedes, which time fields it has,
// and copiedFrom; the header's lineage and losses first.
func shape(h record, rs []record) string {
	var b strings.Builder
	lin, _ := json.Marshal(h["lineage"])
	lossy, _ := json.Marshal(h["producer"].(map[string]any)["lossy"])
	fmt.Fprintf(&b, "header sessionId=%s lineage=%s lossy=%s\n", h.s("sessionId"), lin, lossy)
	for _, r := range rs {
		line := r.s("id") + " " + r.s("type")
		if k := entityKey(r); k != "" {
			line += " " + k
		}
		if r.s("origin") != "" {
			line += " origin=" + r.s("origin")
		}
		if s := r.s("supersedes"); s != "" {
			line += " supersedes=" + s
		}
		switch {
		case r["ts"] != nil && r["observedAt"] != nil:
			line += " ts:" + r.s("tsSource") + "+observedAt"
		case r["ts"] != nil:
			line += " ts:" + r.s("tsSource")
		case r["observedAt"] != nil:
			line += " observedAt"
		}
		if c, ok := r["copiedFrom"].(map[string]any); ok {
			line += fmt.Sprintf(" copiedFrom=%v/%v/%v", c["session"], c["record"], c["proof"])
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

func goldenShape(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}

func TestSDKV2RecordResumeFork(t *testing.T) {
	if testing.Short() {
		t.Skip("builds acptap and runs the official SDK's Node peers")
	}
	sdkDir := testpeers.NodeSDKDir(t) // skips without node_modules (fails when CI=true)
	if acptapBuild != nil {
		t.Fatal(acptapBuild)
	}
	if acptapBin == "" {
		t.Fatal("TestMain did not build acptap")
	}
	tmp := t.TempDir()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "ACPTAP_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(tmp, "config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(tmp, "data"))
	store := filepath.Join(tmp, "store")
	state := filepath.Join(tmp, "agent-state.json")
	agent := []string{acptapBin, "record", "--store", store, "--", "node", filepath.Join(sdkDir, "v2-agent.mjs"), "--state", state}

	// Connection 1: a new session, "everything" then "basic"; left open.
	first := testpeers.RunSDKClient(t, "v2-client.mjs", []string{"--no-close"}, agent)
	first.RequireOK(t)
	const parent, fork = "sdk-v2-session-1", "sdk-v2-session-2"
	if first.Summary.SessionID != parent {
		t.Fatalf("session = %q", first.Summary.SessionID)
	}
	kinds := []string{
		"user_message_chunk", "user_message", "agent_message_chunk", "agent_message",
		"agent_thought_chunk", "agent_thought", "state_update", "tool_call_content_chunk",
		"tool_call_update", "terminal_update", "terminal_output_chunk", "plan_update",
		"plan_removed", "available_commands_update", "config_option_update",
		"session_info_update", "usage_update", "notice", "compaction_update",
		"compaction_summary_chunk", "subagent_update", "session_message",
		"session_message_chunk", "_acptap_test_vendor",
	}
	for _, k := range kinds {
		if first.Summary.Updates[k] == 0 {
			t.Errorf("the agent sent no %s", k)
		}
	}
	parentPath := filepath.Join(store, "sessions", parent, "stream.asr.jsonl")
	_, afterFirst := readStream(t, parentPath)

	// Connection 2: resume with replay, one more "everything" turn, then a
	// fork resumed with replay and prompted once.
	second := testpeers.RunSDKClient(t, "v2-client.mjs",
		[]string{"--resume-session", parent, "--prompt", "everything: once more", "--fork", "--fork-prompt", "basic: in the fork"}, agent)
	second.RequireOK(t)

	forkPath := filepath.Join(store, "sessions", fork, "stream.asr.jsonl")
	out, err := exec.Command(acptapBin, "validate", parentPath, forkPath).CombinedOutput()
	if err != nil {
		t.Errorf("acptap validate: %v\n%s", err, out)
	}

	ph, prs := readStream(t, parentPath)
	fh, frs := readStream(t, forkPath)
	goldenShape(t, "sdk_v2_parent.shape", shape(ph, prs))
	goldenShape(t, "sdk_v2_fork.shape", shape(fh, frs))

	checkEveryKindRecorded(t, prs[:len(afterFirst)])
	checkResume(t, prs, len(afterFirst))
	checkFork(t, fh, frs, prs, parent)
}

// checkEveryKindRecorded: each update kind the agent sent left its mark in
// the first connection's records.
func checkEveryKindRecorded(t *testing.T, rs []record) {
	t.Helper()
	has := func(pred func(record) bool) bool {
		for _, r := range rs {
			if pred(r) {
				return true
			}
		}
		return false
	}
	content := func(r record) string { b, _ := json.Marshal(r["content"]); return string(b) }
	typ := func(ty string) func(record) bool { return func(r record) bool { return r.s("type") == ty } }
	checks := map[string]func(record) bool{
		"user_message(_chunk): the prompt": func(r record) bool {
			return r.s("messageId") == "user-1" && r.s("origin") == "prompt" && strings.Contains(content(r), "everything: please fix")
		},
		"agent_message(_chunk)": func(r record) bool {
			return r.s("messageId") == "agent-1-message" && strings.Contains(content(r), "Suggested commit message")
		},
		"agent_thought(_chunk)": func(r record) bool {
			return r.s("messageId") == "agent-1-thought" && strings.Contains(content(r), `"type":"reasoning"`)
		},
		"tool_call_update → tool_call": func(r record) bool {
			return r.s("type") == "tool_call" && r.s("callId") == "call-1-edit" && r.s("name") == "edit_file"
		},
		// The content chunk ("Applying the edit…") is replaced by the
		// completed update's whole content, as ACP's patch rule says.
		"tool_call_content_chunk, tool_call_update completed → tool_result": func(r record) bool {
			b, _ := json.Marshal(r["displayContent"])
			return r.s("type") == "tool_result" && r.s("status") == "completed" && strings.Contains(string(b), "Edited 1 line")
		},
		"diff → file_change": func(r record) bool { return r.s("type") == "file_change" && r.s("status") == "applied" },
		"terminal_update, terminal_output_chunk": func(r record) bool {
			return r.s("type") == "terminal" && r.s("status") == "exited" && r["output"] != nil
		},
		"plan_update":               func(r record) bool { return r.s("type") == "plan" && r.s("planId") == "plan-1" },
		"plan_removed":              typ("org.agent-session.acp/plan_removed"),
		"available_commands_update": typ("org.agent-session.acp/available_commands_update"),
		"config_option_update":      func(r record) bool { return r.s("type") == "config_change" && r.s("mode") == "code" },
		"session_info_update":       func(r record) bool { return r.s("type") == "session_info" && r.s("title") == "Fix the greeting" },
		"usage_update":              typ("usage_summary"),
		"notice":                    func(r record) bool { return r.s("origin") == "notice" && r.s("author") == "harness" },
		"compaction_update, compaction_summary_chunk": func(r record) bool {
			return r.s("type") == "compaction" && r.s("status") == "completed" && r["replaces"] != nil
		},
		"subagent_update": func(r record) bool {
			return r.s("type") == "subagent" && r.s("childSession") == "sdk-v2-session-1-child-1"
		},
		"session_message(_chunk)": func(r record) bool {
			return r.s("origin") == "inter_session" && r.s("author") == "agent" && r.s("role") == "user" && strings.Contains(content(r), "Tests passed.")
		},
		"_acptap_test_vendor": typ("org.agent-session.acp/_acptap_test_vendor"),
		"state_update":        func(r record) bool { return r.s("type") == "state" && r.s("stopReason") == "end_turn" },
		"session/request_permission": func(r record) bool {
			return r.s("type") == "permission" && r.s("requestId") == "0:0" && r.s("decision") == "allow_once"
		},
		"elicitation/create": func(r record) bool { return r.s("type") == "input_request" && r.s("status") == "answered" },
	}
	for what, pred := range checks {
		if !has(pred) {
			t.Errorf("no record for %s", what)
		}
	}
}

// latestWins are the record types a replay writes only as the value current
// at its end.
var latestWins = map[string]bool{"state": true, "usage_summary": true, "session_info": true, "config_change": true}

// checkResume: the second connection's replay wrote no entity record (the
// replayed history equals what was recorded), only the current state, then
// state resumed; the new turn's derived ids carry connection number 1.
func checkResume(t *testing.T, rs []record, firstLen int) {
	t.Helper()
	resumed := -1
	for i := firstLen; i < len(rs); i++ {
		if rs[i].s("type") == "state" && rs[i].s("state") == "resumed" {
			resumed = i
			break
		}
		if !latestWins[rs[i].s("type")] || rs[i]["ts"] != nil || rs[i]["observedAt"] == nil {
			t.Errorf("replay wrote %s %s (%s): only latest-wins values with observedAt were expected", rs[i].s("id"), rs[i].s("type"), entityKey(rs[i]))
		}
	}
	if resumed < 0 {
		t.Fatal("no state resumed")
	}
	seen := map[string]bool{}
	for _, r := range rs {
		if r.s("type") == "permission" || r.s("type") == "input_request" {
			seen[r.s("requestId")] = true
		}
	}
	for _, id := range []string{"0:0", "0:1", "1:0", "1:1"} {
		if !seen[id] {
			t.Errorf("no permission or input request %s (ids seen: %v)", id, seen)
		}
	}
	for _, r := range rs[resumed:] {
		if r["observedAt"] != nil || r["ts"] == nil {
			t.Errorf("live record %s %s has no receipt ts", r.s("id"), r.s("type"))
		}
	}
}

// checkFork: lineage; the replayed history has observedAt only and, for
// each entity the parent recorded, copiedFrom names the parent's record of
// the same type and entity; localThroughId is the last replayed record;
// the fork's own turn follows with receipt times.
func checkFork(t *testing.T, h record, rs, parent []record, parentID string) {
	t.Helper()
	lin, _ := json.Marshal(h["lineage"])
	want := `{"forkedFrom":{"evidence":"native_field","session":"` + parentID + `"},"inherits":{"evidence":"native_field","from":"` + parentID + `","mode":"copied"}}`
	if string(lin) != want {
		t.Errorf("fork lineage = %s", lin)
	}
	byID := map[string]record{}
	parentKeys := map[string]bool{}
	for _, r := range parent {
		byID[r.s("id")] = r
		parentKeys[r.s("type")+" "+entityKey(r)] = true
	}
	decl := -1
	for i, r := range rs {
		if r.s("localThroughId") != "" {
			decl = i
			break
		}
	}
	if decl < 1 {
		t.Fatalf("no localThroughId declaration")
	}
	if got := rs[decl].s("localThroughId"); got != rs[decl-1].s("id") {
		t.Errorf("localThroughId = %s, want the last replayed record %s", got, rs[decl-1].s("id"))
	}
	copied := 0
	for _, r := range rs[:decl] {
		if r["ts"] != nil || r["observedAt"] == nil {
			t.Errorf("replayed %s %s: want observedAt only", r.s("id"), r.s("type"))
		}
		key := entityKey(r)
		c, ok := r["copiedFrom"].(map[string]any)
		if !ok {
			if strings.Contains(key, "Id=") && !strings.Contains(key, "notice:") && parentKeys[r.s("type")+" "+key] {
				t.Errorf("%s %s %s is in the parent but has no copiedFrom", r.s("id"), r.s("type"), key)
			}
			continue
		}
		copied++
		src, ok := byID[fmt.Sprint(c["record"])]
		switch {
		case c["session"] != parentID || c["proof"] != "native_id":
			t.Errorf("%s copiedFrom = %v", r.s("id"), c)
		case !ok:
			t.Errorf("%s copiedFrom names %v, not a parent record", r.s("id"), c["record"])
		case src.s("type") != r.s("type") || entityKey(src) != key:
			t.Errorf("%s (%s %s) copiedFrom %v is a %s %s", r.s("id"), r.s("type"), key, c["record"], src.s("type"), entityKey(src))
		}
	}
	if copied < 20 {
		t.Errorf("only %d records carry copiedFrom", copied)
	}
	for _, r := range rs[decl+1:] {
		if r["ts"] == nil || r["observedAt"] != nil || r["copiedFrom"] != nil {
			t.Errorf("local record %s %s: want a receipt ts, no copy marker", r.s("id"), r.s("type"))
		}
	}
	var b bytes.Buffer
	for _, r := range rs[decl+1:] {
		b.WriteString(r.s("type") + " ")
	}
	if !strings.Contains(b.String(), "message message state state") {
		t.Errorf("fork's own turn: %s", b.String())
	}
}
