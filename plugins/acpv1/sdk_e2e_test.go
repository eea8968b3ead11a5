package acpv1_test

// The real thing: the official npm SDK's ACP v1 agent and client
// (testdata/sdk, the default entrypoint) through the real tee (`acptap
// record`): two turns ("everything", then "basic"), session/set_mode and a
// session/load replay on the same connection. The live stream is checked
// record by record and by `acptap validate`, the AEP output beside it must
// exist, and the client's trace, converted in process (the plugin's convert
// mode), must give a valid stream with the same records.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/internal/pluginwire"
	"github.com/acptap/acptap/internal/testpeers"
	"github.com/acptap/acptap/plugins/acpv1"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
	"github.com/acptap/acptap/sdk/asr/asrcheck"
	"github.com/acptap/acptap/sdk/mappertest"
)

// acptapBin is the acptap binary TestMain builds for the SDK test.
var (
	acptapBin   string
	acptapBuild error
)

const sdkTest = "TestSDKV1RecordLoadConvert"

func TestMain(m *testing.M) {
	os.Exit(testpeers.RunBuilding(m, sdkTest, &acptapBin, &acptapBuild))
}

// record is one stream record, decoded.
type record map[string]any

func (r record) s(k string) string { v, _ := r[k].(string); return v }

func decodeStream(t *testing.T, b []byte) (record, []record) {
	t.Helper()
	var all []record
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%v: %s", err, sc.Bytes())
		}
		all = append(all, r)
	}
	if len(all) == 0 || all[0].s("type") != "header" {
		t.Fatalf("no header:\n%s", b)
	}
	return all[0], all[1:]
}

func TestSDKV1RecordLoadConvert(t *testing.T) {
	if testing.Short() {
		t.Skip("builds acptap and runs the official SDK's Node peers")
	}
	testpeers.NodeSDKDir(t) // skips without node_modules (fails when CI=true)
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
	agent := append([]string{acptapBin, "record", "--store", store, "--"}, testpeers.NodeArgv(t, "v1-agent.mjs")...)

	res := testpeers.RunSDKClient(t, "v1-client.mjs", []string{"--set-mode", "ask", "--load"}, agent)
	res.RequireOK(t)
	const session = "sdk-v1-session-1"
	if res.Summary.SessionID != session || res.Summary.ProtocolVersion != 1 {
		t.Fatalf("session %q, protocol version %d", res.Summary.SessionID, res.Summary.ProtocolVersion)
	}
	for _, k := range []string{"agent_thought_chunk", "agent_message_chunk", "user_message_chunk", "plan", "tool_call",
		"tool_call_update", "current_mode_update", "config_option_update", "available_commands_update",
		"session_info_update", "usage_update", "notice", "compaction_update", "compaction_summary_chunk"} {
		if res.Summary.Updates[k] == 0 {
			t.Errorf("the agent sent no %s", k)
		}
	}
	testpeers.CheckTrace(t, testpeers.V1, res.Trace)

	path := filepath.Join(store, "sessions", session, "stream.asr.jsonl")
	if out, err := exec.Command(acptapBin, "validate", path).CombinedOutput(); err != nil {
		t.Errorf("acptap validate: %v\n%s", err, out)
	}
	if fi, err := os.Stat(filepath.Join(store, "aep", "acp", session+".jsonl")); err != nil || fi.Size() == 0 {
		t.Errorf("no AEP output beside the ASR stream: %v", err)
	}
	liveBytes, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h, rs := decodeStream(t, liveBytes)
	checkHeader(t, h, "recorder")
	checkV1Records(t, rs)
	checkLoad(t, rs)

	// The client's trace, converted: the same entities, by a converter.
	conv := convertTrace(t, res.Trace, session)
	ch, crs := decodeStream(t, conv)
	checkHeader(t, ch, "converter")
	checkV1Records(t, crs)
	if got, want := entities(crs), entities(rs); got != want {
		t.Errorf("the converted trace has other entities than the live stream:\nconverted:\n%s\nlive:\n%s", got, want)
	}
}

// checkHeader: the producer is acpv1, the source ACP v1, the losses
// declared; agent.name is the fallback for the SDK agent's agentInfo.
func checkHeader(t *testing.T, h record, method string) {
	t.Helper()
	p, _ := h["producer"].(map[string]any)
	src, _ := json.Marshal(p["source"])
	plugin, _ := json.Marshal(p["plugin"])
	if p["method"] != method || string(src) != `{"format":"acp","formatVersion":"1"}` || string(plugin) != `{"name":"acpv1","version":"`+acpv1.Version+`"}` {
		t.Errorf("producer = %v", p)
	}
	lossy, _ := json.Marshal(p["lossy"])
	if !strings.Contains(string(lossy), asr.LossV1TurnState) {
		t.Errorf("producer.lossy = %s", lossy)
	}
	agent, _ := json.Marshal(h["agent"])
	if string(agent) != `{"name":"org.agent-session.acp.acptap-sdk-v1-agent","version":"0.1.0"}` {
		t.Errorf("agent = %s", agent)
	}
}

// checkV1Records: each v1 update kind and client-side method left its mark.
func checkV1Records(t *testing.T, rs []record) {
	t.Helper()
	content := func(r record) string { b, _ := json.Marshal(r["content"]); return string(b) }
	has := func(pred func(record) bool) bool {
		for _, r := range rs {
			if pred(r) {
				return true
			}
		}
		return false
	}
	typ := func(ty string) func(record) bool { return func(r record) bool { return r.s("type") == ty } }
	declared := map[string]bool{}
	for _, r := range rs {
		if r.s("type") == "declaration" {
			for _, c := range r["lossy"].([]any) {
				declared[c.(string)] = true
			}
		}
	}
	for _, c := range []string{asr.LossV1MessageBoundaries, asr.LossV1DiffOperations, asr.LossV1TerminalOutput, asr.LossToolStatus, asr.LossToolResultContent} {
		if !declared[c] {
			t.Errorf("loss %s not declared", c)
		}
	}
	checks := map[string]func(record) bool{
		"session/prompt → derived prompt message": func(r record) bool {
			return r.s("messageId") == "msg:1" && r.s("idSource") == "derived" && r.s("origin") == "prompt" && strings.Contains(content(r), "please fix the greeting")
		},
		"agent_thought_chunk without messageId → derived reasoning message": func(r record) bool {
			return r.s("messageId") == "msg:2" && r.s("idSource") == "derived" && strings.Contains(content(r), `"type":"reasoning"`)
		},
		"agent_message_chunk with messageId": func(r record) bool {
			return r.s("messageId") == "agent-1-message" && r["idSource"] == nil && strings.Contains(content(r), " Done.")
		},
		"tool_call + tool_call_update → one call": func(r record) bool {
			return r.s("type") == "tool_call" && r.s("callId") == "call-1-edit" && r.s("title") == "Edit src/hello.go"
		},
		"tool result": func(r record) bool {
			return r.s("type") == "tool_result" && r.s("callId") == "call-1-edit" && r.s("status") == "completed"
		},
		"v1 diff → file_change modify with full text": func(r record) bool {
			b, _ := json.Marshal(r["changes"])
			return r.s("type") == "file_change" && r.s("status") == "applied" && strings.Contains(string(b), `"op":"modify"`) &&
				strings.Contains(string(b), acpv1.MetaOldText) && strings.Contains(string(b), `Println(\"hello\")`)
		},
		"plan → plan with the derived id": func(r record) bool { return r.s("type") == "plan" && r.s("planId") == "plan" },
		"terminal/* → terminal": func(r record) bool {
			return r.s("type") == "terminal" && r.s("terminalId") == "client-term-1" && r.s("status") == "exited" && r.s("command") == "go test ./..." && r["output"] != nil
		},
		"terminal content → exec": func(r record) bool {
			b, _ := json.Marshal(r["exec"])
			return r.s("type") == "tool_result" && string(b) == `{"terminalId":"client-term-1"}`
		},
		"current_mode_update → config_change mode": func(r record) bool { return r.s("type") == "config_change" && r.s("mode") == "ask" },
		"config_option_update":                     func(r record) bool { return r.s("type") == "config_change" && r["options"] != nil },
		"available_commands_update":                typ("org.agent-session.acp/available_commands_update"),
		"session_info_update":                      func(r record) bool { return r.s("type") == "session_info" && r.s("title") == "Fix the greeting" },
		"usage_update":                             typ("usage_summary"),
		"notice":                                   func(r record) bool { return r.s("origin") == "notice" },
		"compaction":                               func(r record) bool { return r.s("type") == "compaction" && r.s("status") == "completed" },
		"fs/read_text_file audit":                  typ("org.agent-session.acp/fs_read_text_file"),
		"fs/write_text_file audit":                 typ("org.agent-session.acp/fs_write_text_file"),
		"session/request_permission": func(r record) bool {
			b, _ := json.Marshal(r["subject"])
			return r.s("type") == "permission" && r.s("requestId") == "0:0" && r.s("decision") == "allow_once" && string(b) == `{"callId":"call-1-edit"}`
		},
		"elicitation/create": func(r record) bool { return r.s("type") == "input_request" && r.s("status") == "answered" },
		"prompt response → state idle end_turn": func(r record) bool {
			return r.s("type") == "state" && r.s("state") == "idle" && r.s("stopReason") == "end_turn"
		},
	}
	for what, pred := range checks {
		if !has(pred) {
			t.Errorf("no record for %s", what)
		}
	}
}

// checkLoad: the session/load replay (the whole history again, prompts as
// user_message_chunks with their own ids) wrote no entity record — the
// replayed prompts took the ids derived live — only state resumed.
func checkLoad(t *testing.T, rs []record) {
	t.Helper()
	resumed := -1
	for i, r := range rs {
		if r.s("state") == "resumed" {
			resumed = i
		}
	}
	if resumed < 0 {
		t.Fatal("no state resumed")
	}
	for _, r := range rs {
		if r["observedAt"] != nil {
			t.Errorf("%s %s (%v) was written from the replay", r.s("id"), r.s("type"), r["messageId"])
		}
		if id := r.s("messageId"); strings.HasPrefix(id, "user-") {
			t.Errorf("the replayed prompt %s was recorded again", id)
		}
	}
}

// entities lists the stream's entity records by type and key, in order.
func entities(rs []record) string {
	var b strings.Builder
	for _, r := range rs {
		for _, k := range []string{"messageId", "callId", "planId", "terminalId", "compactionId", "requestId"} {
			if v := r.s(k); v != "" && !strings.HasPrefix(v, "notice:") {
				fmt.Fprintf(&b, "%s %s=%s supersedes=%s\n", r.s("type"), k, v, r.s("supersedes"))
			}
		}
	}
	return b.String()
}

// convertTrace maps the client's trace with the plugin in convert mode (as
// acptap convert does with a trace log) and returns the session's stream.
func convertTrace(t *testing.T, trace, session string) []byte {
	t.Helper()
	fb := pluginwire.NewFrameBuilder()
	var frames []sdk.Frame
	for i, l := range testpeers.ReadTrace(t, trace) {
		dir := sdk.C2A
		if l.Dir == "recv" {
			dir = sdk.A2C
		}
		frames = fb.Line(frames, uint64(i+1), dir, time.Unix(0, 0).Add(time.Duration(i+1)*time.Millisecond).UTC(), []byte(l.Line))
	}
	req := sdk.StartRequest{Connection: "v1-trace", WireLog: "v1-trace.jsonl", Input: acpv1.InputLog, Mode: sdk.ModeConvert}
	outs := mappertest.Run(t, acpv1.New(), req, frames, 0)
	var b bytes.Buffer
	for _, o := range outs {
		if (o.Kind == sdk.ASRHeader || o.Kind == sdk.ASRRecord) && o.Session == session {
			b.Write(o.JSON)
			b.WriteByte('\n')
		}
	}
	var problems []string
	if _, err := asrcheck.Validate(bytes.NewReader(b.Bytes()), func(p asrcheck.Problem) { problems = append(problems, p.String()) }); err != nil || len(problems) > 0 {
		t.Fatalf("converted trace: %v %v", err, problems)
	}
	if bytes.Contains(b.Bytes(), []byte(`"ts":`)) {
		t.Errorf("the converted trace has no times, but a record has a ts")
	}
	return b.Bytes()
}
