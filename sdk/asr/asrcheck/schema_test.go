package asrcheck

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/acptap/acptap/sdk/asr"
)

// TestSchemaPublishedCopy keeps docs/asr.schema.json identical to the
// embedded schema.
func TestSchemaPublishedCopy(t *testing.T) {
	pub, err := os.ReadFile("../../../docs/asr.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(pub, Schema()) {
		t.Fatal("docs/asr.schema.json differs from sdk/asr/asrcheck/schema/asr.schema.json: copy it over")
	}
	var doc struct {
		Schema string `json:"$schema"`
		ID     string `json:"$id"`
	}
	if err := json.Unmarshal(pub, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != "https://json-schema.org/draft/2020-12/schema" || doc.ID != SchemaID {
		t.Errorf("$schema %q, $id %q", doc.Schema, doc.ID)
	}
}

// schemaCheck validates one line against its type's schema and against
// the whole-line schema (the dispatch external tools use); both must agree.
func schemaCheck(t *testing.T, line string) []string {
	t.Helper()
	cs, err := compiled()
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(line))
	if err != nil {
		t.Fatalf("not JSON: %s", line)
	}
	typ, _ := inst.(map[string]any)["type"].(string)
	s, _ := cs.forType(typ)
	var msgs []string
	if err := s.Validate(inst); err != nil {
		msgs = schemaMessages(err)
	}
	if whole := cs.line.Validate(inst); (whole == nil) != (msgs == nil) {
		t.Errorf("the whole-line schema disagrees on %s: type schema %v, line schema %v", line, msgs, whole)
	}
	return msgs
}

// TestSchemaRecordTypes checks each record type: lines that must pass and
// lines that must fail with a given message.
func TestSchemaRecordTypes(t *testing.T) {
	const env = `"seq":1,"id":"r1",`
	tests := []struct {
		name string
		line string
		want []string // nil: valid
	}{
		// header
		{"header minimal", `{"type":"header","asr":"0.1","sessionId":"s","producer":{"method":"recorder","name":"x","lossy":[]}}`, nil},
		{"header full", hdrACP, nil},
		{"header vendor method and key", `{"type":"header","asr":"0.1","sessionId":"s","producer":{"method":"_replayer","name":"x","lossy":["_x"]},"_acme":1,"_meta":{"k":1}}`, nil},
		{"header without producer", `{"type":"header","asr":"0.1","sessionId":"s"}`, []string{`missing required field "producer"`}},
		{"header lossy repeated", `{"type":"header","asr":"0.1","sessionId":"s","producer":{"method":"recorder","name":"x","lossy":["a","a"]}}`,
			[]string{"producer.lossy: items 0 and 1 are equal"}},
		{"header bad method", `{"type":"header","asr":"0.1","sessionId":"s","producer":{"method":"guess","name":"x","lossy":[]}}`,
			[]string{`producer.method: "guess" is not one of "recorder", "converter", or a "_"-prefixed vendor value`}},
		{"header unknown field", `{"type":"header","asr":"0.1","sessionId":"s","producer":{"method":"recorder","name":"x","lossy":[]},"extra":1}`,
			[]string{`field "extra" is not allowed here`}},
		{"header redacted root", `{"type":"header","asr":"0.1","sessionId":"s","producer":{"method":"recorder","name":"x","lossy":[]},"workspace":{"roots":[{"id":"root0","path":null}]}}`, nil},
		{"header lineage evidence", `{"type":"header","asr":"0.1","sessionId":"s","producer":{"method":"recorder","name":"x","lossy":[]},"lineage":{"spawnedBy":{"session":"p","evidence":"guess"}}}`,
			[]string{`lineage.spawnedBy.evidence: "guess" is not "native_field" or a "_"-prefixed vendor value`}},

		// envelope
		{"envelope ts without tsSource", `{"type":"state",` + env + `"ts":"2026-10-26T14:30:41.207Z","state":"idle"}`, []string{`"ts" needs "tsSource"`}},
		{"envelope bad ts", `{"type":"state",` + env + `"ts":"today","tsSource":"recorder","state":"idle"}`, []string{`ts: "today" is not a valid date-time`}},
		{"envelope bad tsSource", `{"type":"state",` + env + `"ts":"2026-10-26T14:30:41.207Z","tsSource":"clock","state":"idle"}`,
			[]string{`tsSource: "clock" is not one of "recorder", "source", or a "_"-prefixed vendor value`}},
		{"envelope observedAt only", `{"type":"state",` + env + `"observedAt":"2026-10-26T14:30:41.207Z","state":"idle"}`, nil},
		{"envelope seq 0", `{"type":"state","seq":0,"id":"r1","state":"idle"}`, []string{"seq: 0 is less than 1"}},
		{"envelope bad id", `{"type":"state","seq":1,"id":"1","state":"idle"}`, []string{`id: "1" is not a record id (r<seq>)`}},
		{"envelope native and capture", `{"type":"state",` + env + `"state":"idle","native":{"ref":{"wire":"wire/c.jsonl","frames":[1,2]}},"capture":{"x":{"state":"absent"}},"_meta":{"traceparent":"00-1-2-01"},"_acme":true}`, nil},
		{"envelope bad assembly", `{"type":"message",` + env + `"messageId":"m","role":"user","content":[],"assembly":"glued"}`,
			[]string{`assembly: "glued" is not one of "chunks", "folded"`}},
		{"envelope status on a type without one", `{"type":"plan",` + env + `"status":"partial","planId":"p","entries":[]}`, []string{`field "status" is not allowed here`}},

		// message
		{"message prompt", recPrompt, nil},
		{"message notice without role", `{"type":"message",` + env + `"messageId":"notice:0:1","idSource":"derived","origin":"notice","author":"harness","audience":"user","severity":"info","content":[{"type":"text","text":"Compacted"}]}`, nil},
		{"message without role", `{"type":"message",` + env + `"messageId":"m","content":[]}`, []string{`missing required field "role"`}},
		{"message inter_session", `{"type":"message",` + env + `"messageId":"m","role":"user","author":"agent","origin":"inter_session","from":{"session":"a"},"recipients":[{"actor":{"session":"b"}}],"content":[{"type":"text","text":"hi"}]}`, nil},
		{"message bad origin", `{"type":"message",` + env + `"messageId":"m","role":"user","origin":"email","content":[]}`,
			[]string{`origin: "email" is not one of "prompt", "notice", "inter_session"`}},
		{"message unknown field", `{"type":"message",` + env + `"messageId":"m","role":"user","content":[],"text":"x"}`, []string{`field "text" is not allowed here`}},
		{"message vendor field", `{"type":"message",` + env + `"messageId":"m","role":"user","content":[],"_acme.dev/x":"y"}`, nil},

		// content blocks
		{"content: every kind", `{"type":"message",` + env + `"messageId":"m","role":"assistant","content":[` +
			`{"type":"text","text":"a","annotations":{"priority":1},"_meta":{}},{"type":"image","data":"AA==","mimeType":"image/png"},{"type":"audio","data":"AA==","mimeType":"audio/wav"},` +
			`{"type":"resource_link","name":"a","uri":"file:///a"},{"type":"resource","resource":{"uri":"file:///a","text":"x"}},{"type":"resource","resource":{"uri":"file:///b","blob":"AA=="}},` +
			`{"type":"reasoning","text":"think"},{"type":"reasoning","summary":["s"]},{"type":"refusal","text":"no"},{"type":"_acme_widget","x":1}]}`, nil},
		{"content: text without text", `{"type":"message",` + env + `"messageId":"m","role":"user","content":[{"type":"text"}]}`, []string{`content[0]: missing required field "text"`}},
		{"content: without type", `{"type":"message",` + env + `"messageId":"m","role":"user","content":[{"text":"a"}]}`, []string{`content[0]: missing required field "type"`}},
		{"content: image without data", `{"type":"message",` + env + `"messageId":"m","role":"user","content":[{"type":"image","mimeType":"image/png"}]}`, []string{`content[0]: missing required field "data"`}},
		{"content: resource without text or blob", `{"type":"message",` + env + `"messageId":"m","role":"user","content":[{"type":"resource","resource":{"uri":"u"}}]}`,
			[]string{`content[0].resource: needs one of "text", "blob"`}},
		{"content: empty reasoning", `{"type":"message",` + env + `"messageId":"m","role":"assistant","content":[{"type":"reasoning"}]}`,
			[]string{`content[0]: needs one of "text", "summary", "opaque"`}},

		// tool_call, tool_result
		{"tool_call", recCall, nil},
		{"tool_call without callId", `{"type":"tool_call",` + env + `"name":"x"}`, []string{`missing required field "callId"`}},
		{"tool_call bad location", `{"type":"tool_call",` + env + `"callId":"c","locations":[{"path":"/a"}]}`, []string{"locations[0].path: is a string, want object"}},
		{"tool_result", `{"type":"tool_result",` + env + `"status":"completed","callId":"c","linkage":"exact","displayContent":[{"type":"text","text":"ok"}],"raw":{"exit":0},"exec":{"terminalId":"t"},"capture":{"content":{"state":"absent"}},"assembly":"folded"}`, nil},
		{"tool_result vendor status", `{"type":"tool_result",` + env + `"status":"_acme_paused","callId":"c"}`, nil},
		{"tool_result bad status", `{"type":"tool_result",` + env + `"status":"other","callId":"c"}`,
			[]string{`status: "other" is not one of "completed", "failed", "cancelled", "denied", "interrupted", "unknown", "partial", or a "_"-prefixed vendor value`}},
		{"tool_result without status", `{"type":"tool_result",` + env + `"callId":"c"}`, []string{`missing required field "status"`}},

		// file_change
		{"file_change", `{"type":"file_change",` + env + `"status":"applied","cause":{"callId":"c"},"changes":[{"op":"move","path":{"root":"root0","path":"b.go"},"oldPath":{"root":"root0","path":"a.go"},"fileType":"text","mimeType":"text/x-go"}],"patch":{"format":"git_patch","text":"diff"},"precision":"hunks"}`, nil},
		{"file_change move without oldPath", `{"type":"file_change",` + env + `"status":"applied","changes":[{"op":"move","path":{"root":null,"path":"/b"}}]}`, []string{`changes[0]: missing required field "oldPath"`}},
		{"file_change vendor op without path", `{"type":"file_change",` + env + `"status":"proposed","changes":[{"op":"_acme_chmod"}]}`, nil},
		{"file_change bad status", `{"type":"file_change",` + env + `"status":"done","changes":[]}`,
			[]string{`status: "done" is not one of "proposed", "applied", "failed", "unknown", "partial", or a "_"-prefixed vendor value`}},
		{"file_change bad PathRef", `{"type":"file_change",` + env + `"status":"applied","changes":[{"op":"add","path":{"path":"a"}}]}`, []string{`changes[0].path: missing required field "root"`}},

		// permission, input_request
		{"permission", `{"type":"permission",` + env + `"status":"resolved","requestId":"0:0","idSource":"derived","title":"Move?","description":"d","options":[{"optionId":"ok","name":"Allow","kind":"allow_once"}],"subject":{"callId":"c"},"decision":"allow_once","selectedOptionId":"ok"}`, nil},
		{"permission bad status", `{"type":"permission",` + env + `"status":"granted","requestId":"0:0"}`, []string{`status: "granted" is not one of "pending", "resolved"`}},
		{"input_request (the seed's example)", `{"type":"input_request","seq":18,"id":"r18","ts":"2026-10-26T14:30:41.207Z","tsSource":"recorder","requestId":"0:12","idSource":"derived","callId":"call_7","mode":"form","message":"Which branch should the release be cut from?","requestedSchema":{"type":"object","properties":{"branch":{"type":"string","enum":["main","release/2.4"]}},"required":["branch"]},"status":"answered","response":{"branch":"release/2.4"}}`, nil},
		{"input_request url", `{"type":"input_request",` + env + `"requestId":"el-1","mode":"url","url":"https://example.com/auth","status":"pending"}`, nil},
		{"input_request bad mode", `{"type":"input_request",` + env + `"requestId":"x","mode":"voice","status":"pending"}`,
			[]string{`mode: "voice" is not one of "form", "url", or a "_"-prefixed vendor value`}},

		// plan, terminal, state, compaction
		{"plan", `{"type":"plan",` + env + `"planId":"p","planType":"items","entries":[{"content":"a","priority":"high","status":"pending"}]}`, nil},
		{"plan without entries", `{"type":"plan",` + env + `"planId":"p"}`, []string{`missing required field "entries"`}},
		{"terminal", `{"type":"terminal",` + env + `"status":"exited","terminalId":"t","command":"go test","cwd":{"root":"root0","path":""},"exitCode":0,"signal":null,"output":{"blob":{"encoding":"base64","data":"b2s="}},"assembly":"chunks"}`, nil},
		{"terminal bad status", `{"type":"terminal",` + env + `"status":"done","terminalId":"t"}`, []string{`status: "done" is not one of "running", "exited"`}},
		{"terminal bad blob", `{"type":"terminal",` + env + `"status":"running","terminalId":"t","output":{"blob":{"encoding":"hex","data":"!"}}}`,
			[]string{`output.blob.data: is not base64 (standard alphabet, padded)`, `output.blob.encoding: "hex" is not "base64"`}},
		{"state", `{"type":"state",` + env + `"state":"idle","stopReason":"end_turn"}`, nil},
		{"state with error", `{"type":"state",` + env + `"state":"idle","stopReason":"error","error":{"code":-32603,"message":"boom"}}`, nil},
		{"state without state", `{"type":"state",` + env + `"stopReason":"end_turn"}`, []string{`missing required field "state"`}},
		{"compaction", `{"type":"compaction",` + env + `"status":"completed","compactionId":"k","kind":"summary","summary":[{"type":"text","text":"s"}],"replaces":{"throughId":"r1"},"capture":{"summary":{"state":"absent"}}}`, nil},
		{"compaction bad kind", `{"type":"compaction",` + env + `"status":"completed","compactionId":"k","kind":"trim"}`,
			[]string{`kind: "trim" is not "summary" or a "_"-prefixed vendor value`}},

		// usage_summary, session_info, config_change, subagent, declaration
		{"usage_summary", `{"type":"usage_summary",` + env + `"scope":"session","cumulative":true,"includesChildren":null,"contextWindow":{"used":1,"size":2},"cost":{"amount":0.5,"currency":"USD"}}`, nil},
		{"usage_summary negative", `{"type":"usage_summary",` + env + `"scope":"session","cumulative":true,"includesChildren":null,"contextWindow":{"used":-1,"size":2}}`,
			[]string{"contextWindow.used: -1 is less than 0"}},
		{"usage_summary without includesChildren", `{"type":"usage_summary",` + env + `"scope":"session","cumulative":true}`, []string{`missing required field "includesChildren"`}},
		{"session_info", `{"type":"session_info",` + env + `"title":"T"}`, nil},
		{"session_info cleared", `{"type":"session_info",` + env + `"title":null}`, nil},
		{"config_change", `{"type":"config_change",` + env + `"options":[{"configId":"model","name":"Model","type":"select","currentValue":"m"}],"model":{"id":"m"},"mode":"code"}`, nil},
		{"subagent", `{"type":"subagent",` + env + `"childSession":"child","callId":"c"}`, nil},
		{"declaration lossy", recDecl, nil},
		{"declaration localThroughId", `{"type":"declaration",` + env + `"localThroughId":"r1"}`, nil},
		{"declaration empty", `{"type":"declaration",` + env + `"lossy":[]}`, []string{"lossy: needs at least 1 items"}},

		// audit-only, vendor, unknown
		{"audit", `{"type":"org.agent-session.acp/available_commands_update",` + env + `"native":{"record":{"sessionUpdate":"available_commands_update"}}}`, nil},
		{"audit without native.record", `{"type":"org.agent-session.acp/x",` + env + `"native":{"ref":{"wire":"w","frames":[1]}}}`, []string{`native: missing required field "record"`}},
		{"vendor", `{"type":"_acme/thing",` + env + `"anything":{"goes":true}}`, nil},
		{"other ASR type", `{"type":"gap",` + env + `"frames":3,"bytes":100}`, nil},
		{"other ASR type checks its envelope", `{"type":"tombstone","seq":1}`, []string{`missing required field "id"`}},
		{"vendor checks its envelope", `{"type":"_acme/thing","seq":"1","id":"r1"}`, []string{"seq: is a string, want integer"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := schemaCheck(t, tt.line)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("schema messages (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSchemaCoversGoModel marshals every record type of the Go model with
// every field set: the schema accepts what the model writes.
func TestSchemaCoversGoModel(t *testing.T) {
	root := "root0"
	no := false
	env := func(typ, status string) asr.Envelope {
		return asr.Envelope{Type: typ, Seq: 2, ID: "r2", TS: "2026-10-26T14:30:41.207Z", TSSource: asr.TSSourceRecorder,
			ObservedAt: "2026-10-26T14:30:42.000Z", Status: status}
	}
	prov := asr.Provenance{Native: &asr.Native{Ref: &asr.NativeRef{Wire: "wire/c.jsonl", Frames: []uint64{1}}},
		Capture: map[string]asr.CaptureState{"x": {State: "absent"}}, Assembly: asr.AssemblyFolded,
		Meta: map[string]json.RawMessage{"traceparent": json.RawMessage(`"00-a-b-01"`)}}
	text := json.RawMessage(`{"type":"text","text":"t"}`)
	ref := &asr.PathRef{Root: &root, Path: "a.go"}
	recs := []asr.Record{
		&asr.Message{Envelope: env(asr.TypeMessage, ""), MessageID: "m", IDSource: "derived", Role: "user", Origin: "inter_session", Author: "agent",
			Audience: "user", From: &asr.SessionRef{Session: "a"}, Recipients: []asr.Recipient{{Actor: asr.SessionRef{Session: "b"}}}, Severity: "info",
			Content: []json.RawMessage{text}, Provenance: prov},
		&asr.ToolCall{Envelope: env(asr.TypeToolCall, ""), CallID: "c", CallIDSource: "native", Name: "n", Title: "t", Kind: "read",
			Input: json.RawMessage(`{}`), Locations: []asr.Location{{Path: *ref, Line: json.RawMessage(`3`)}}, Provenance: prov},
		&asr.ToolResult{Envelope: env(asr.TypeToolResult, "completed"), CallID: "c", Linkage: "exact", DisplayContent: []json.RawMessage{text},
			Raw: json.RawMessage(`1`), Exec: &asr.Exec{TerminalID: "t"}, Provenance: prov},
		&asr.FileChange{Envelope: env(asr.TypeFileChange, "applied"), Cause: &asr.Cause{CallID: "c"},
			Changes: []asr.Change{{Op: "move", Path: ref, OldPath: ref, FileType: "text", MimeType: "text/plain"}},
			Patch:   &asr.Patch{Format: "git_patch", Text: "d"}, Precision: "hunks", Provenance: prov},
		&asr.Permission{Envelope: env(asr.TypePermission, "resolved"), RequestID: "0:1", IDSource: "derived", Title: "t", Description: "d",
			Options: json.RawMessage(`[{"optionId":"a","name":"A","kind":"allow_once"}]`), Subject: json.RawMessage(`{"callId":"c"}`),
			Decision: "allow_once", SelectedOptionID: "a", Provenance: prov},
		&asr.InputRequest{Envelope: env(asr.TypeInputRequest, "answered"), RequestID: "e", IDSource: "native", CallID: "c", Mode: "form",
			Message: "m", RequestedSchema: json.RawMessage(`{"type":"object"}`), URL: "https://x", Response: json.RawMessage(`{"a":1}`), Provenance: prov},
		&asr.Plan{Envelope: env(asr.TypePlan, ""), PlanID: "p", PlanType: "items", Entries: json.RawMessage(`[{"content":"c","priority":"low","status":"pending"}]`), Provenance: prov},
		&asr.Terminal{Envelope: env(asr.TypeTerminal, "exited"), TerminalID: "t", Command: "ls", Cwd: ref, ExitCode: json.RawMessage(`0`),
			Signal: json.RawMessage(`"SIGTERM"`), Output: &asr.Output{Blob: asr.Blob{Encoding: "base64", Data: "b2s="}}, Provenance: prov},
		&asr.State{Envelope: env(asr.TypeState, ""), State: "idle", StopReason: json.RawMessage(`"end_turn"`), Error: json.RawMessage(`{"code":1}`), Provenance: prov},
		&asr.Compaction{Envelope: env(asr.TypeCompaction, "completed"), CompactionID: "k", Kind: "summary", Summary: []json.RawMessage{text},
			Error: json.RawMessage(`"e"`), Replaces: &asr.Replaces{ThroughID: "r1"}, Provenance: prov},
		&asr.UsageSummary{Envelope: env(asr.TypeUsageSummary, ""), Scope: "session", Cumulative: true, IncludesChildren: &no,
			ContextWindow: &asr.ContextWindow{Used: json.RawMessage(`1`), Size: json.RawMessage(`2`)},
			Cost:          &asr.Cost{Amount: json.RawMessage(`0.1`), Currency: "USD"}, Provenance: prov},
		&asr.SessionInfo{Envelope: env(asr.TypeSessionInfo, ""), Title: json.RawMessage(`"T"`), Provenance: prov},
		&asr.ConfigChange{Envelope: env(asr.TypeConfigChange, ""), Options: json.RawMessage(`[]`), Model: &asr.ModelRef{ID: "m"}, Mode: "code", Provenance: prov},
		&asr.Subagent{Envelope: env(asr.TypeSubagent, ""), ChildSession: "child", CallID: "c", Provenance: prov},
		&asr.Declaration{Envelope: env(asr.TypeDeclaration, ""), Lossy: []string{"reasoning"}, LocalThroughID: "r1", Provenance: prov},
		&asr.Audit{Envelope: env(asr.AuditPrefix+"available_commands_update", ""),
			Provenance: asr.Provenance{Native: &asr.Native{Ref: prov.Native.Ref, Record: json.RawMessage(`{"sessionUpdate":"available_commands_update"}`)}}},
	}
	for _, rec := range recs {
		b, err := asr.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		if msgs := schemaCheck(t, string(b)); msgs != nil {
			t.Errorf("%s: %v\n%s", rec.Env().Type, msgs, b)
		}
	}
	h := asr.Header{Type: "header", ASR: asr.FormatVersion, SessionID: "s", CreatedAt: "2026-10-26T14:30:41.207Z",
		Agent: &asr.Agent{Name: "a", Version: "1"}, Producer: asr.Producer{Method: "recorder", Name: "acptap", Version: "0.1.0",
			Plugin: &asr.Plugin{Name: "acpv2", Version: "0.1.0"}, Source: &asr.Source{Format: "acp", FormatVersion: "2.0.0-alpha.9"}, Lossy: []string{"usage"}},
		Workspace: &asr.Workspace{Roots: asr.RootIDs([]string{"/w"})},
		Lineage: &asr.Lineage{ForkedFrom: &asr.SessionLink{Session: "p", Evidence: "native_field"},
			Inherits: &asr.Inherits{Mode: "copied", From: "p", Evidence: "native_field"}, SpawnedBy: &asr.SessionLink{Session: "q", Evidence: "native_field"}},
		Meta: map[string]json.RawMessage{"k": json.RawMessage(`1`)}}
	b, err := asr.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if msgs := schemaCheck(t, string(b)); msgs != nil {
		t.Errorf("header: %v\n%s", msgs, b)
	}
}

// TestSchemaDocsExamples validates every example line of docs/asr.md (the
// lines of its ```json blocks that are stream lines).
func TestSchemaDocsExamples(t *testing.T) {
	f, err := os.Open("../../../docs/asr.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	in, n, lineNo := false, 0, 0
	for sc.Scan() {
		lineNo++
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "```json"):
			in = true
			continue
		case strings.HasPrefix(l, "```"):
			in = false
			continue
		}
		if !in || !strings.HasPrefix(l, `{"type":`) {
			continue
		}
		n++
		if msgs := schemaCheck(t, l); msgs != nil {
			t.Errorf("docs/asr.md:%d: %v", lineNo, msgs)
		}
	}
	if n < 15 {
		t.Errorf("only %d example lines in docs/asr.md", n)
	}
}
