package acpv2a13

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/acptap/acptap/plugins/internal/acpasr"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
	"github.com/acptap/acptap/sdk/mappertest"
)

// TestGoldenAlpha13Additions maps each fixture (fixtures_test.go) and
// compares every output with testdata/<name>.golden.jsonl; every stream
// passes asrcheck.Validate.
func TestGoldenAlpha13Additions(t *testing.T) {
	for _, name := range sortedNames(fixtures) {
		t.Run(name, func(t *testing.T) {
			golden(t, name, mapAll(t, live, parseFrames(t, fixtures[name])))
		})
	}
}

func mapFixture(t *testing.T, name string) []sdk.Output {
	return mapAll(t, live, parseFrames(t, fixtures[name]))
}

// diags returns the diagnostics' summaries.
func diags(outs []sdk.Output) []string {
	var out []string
	for _, o := range outs {
		if o.Kind == sdk.Diagnostic {
			out = append(out, o.Summary+": "+o.Detail)
		}
	}
	return out
}

// noNonconforming: the draft's own frames conform to its schema.
func noNonconforming(t *testing.T, outs []sdk.Output) {
	t.Helper()
	for _, d := range diags(outs) {
		if strings.Contains(d, "does not conform") || strings.Contains(d, "unknown method") {
			t.Errorf("diagnostic: %s", d)
		}
	}
	for _, r := range records(t, outs, "s1") {
		if strings.Contains(js(r), "nonconforming") {
			t.Errorf("nonconforming declared: %s", js(r))
		}
	}
}

// TestASR700_HeaderNamesAlpha13: producer.source.formatVersion is the draft.
func TestASR700_HeaderNamesAlpha13(t *testing.T) {
	h := records(t, mapFixture(t, "set_title_session_info"), "s1")[0]
	want := `{"format":"acp","formatVersion":"2.0.0-alpha.13"}`
	if got := js(h["producer"].(map[string]any)["source"]); got != want {
		t.Errorf("source = %s, want %s", got, want)
	}
}

func TestSetTitleIsSessionInfo(t *testing.T) {
	outs := mapFixture(t, "set_title_session_info")
	noNonconforming(t, outs)
	infos := ofType(records(t, outs, "s1"), "session_info")
	if len(infos) != 1 || infos[0]["title"] != "Fix the parser" {
		t.Fatalf("session_info records = %s, want one with the stored title", js(infos))
	}
}

func TestBackgroundWorkInStateRecords(t *testing.T) {
	outs := mapFixture(t, "background_state")
	noNonconforming(t, outs)
	states := ofType(records(t, outs, "s1"), "state")
	if len(states) != 4 {
		t.Fatalf("%d state records, want 4", len(states))
	}
	for i, wantBG := range []string{`"_acme_job"`, `"terminalId":"t1"`, ``, `"background":[]`} {
		native := js(states[i]["native"])
		if wantBG == "" {
			if strings.Contains(native, "record") {
				t.Errorf("state %d without background keeps a native record: %s", i, native)
			}
			continue
		}
		if !strings.Contains(native, wantBG) {
			t.Errorf("state %d native = %s, want the update with %s", i, native, wantBG)
		}
	}
}

func TestToolCallCancelAuditedWithOutcome(t *testing.T) {
	outs := mapFixture(t, "tool_call_cancel")
	noNonconforming(t, outs)
	recs := records(t, outs, "s1")
	if n := len(ofType(recs, "org.agent-session.acp/tool_call_cancel")); n != 2 {
		t.Errorf("%d tool_call_cancel audit records, want 2", n)
	}
	resp := ofType(recs, "org.agent-session.acp/tool_call_cancel_response")
	if len(resp) != 2 || !strings.Contains(js(resp[1]), "already final") {
		t.Errorf("responses = %s, want the result and the error", js(resp))
	}
	results := ofType(recs, "tool_result")
	if len(results) != 1 || results[0]["status"] != "cancelled" {
		t.Errorf("tool_result = %s, want cancelled", js(results))
	}
	if !slices.Contains(lossyOf(recs), asr.LossControls) {
		t.Errorf("lossy %v lacks %s", lossyOf(recs), asr.LossControls)
	}
}

func TestTerminalSizeAndCancel(t *testing.T) {
	outs := mapFixture(t, "terminal_cancel_size")
	noNonconforming(t, outs)
	recs := records(t, outs, "s1")
	terms := ofType(recs, "terminal")
	if len(terms) != 1 || js(terms[0]["_org.acptap/size"]) != `{"cols":80,"rows":24}` || terms[0]["signal"] != "SIGTERM" {
		t.Fatalf("terminal = %s, want the last size and the signal", js(terms))
	}
	if len(ofType(recs, "org.agent-session.acp/terminal_cancel")) != 1 || len(ofType(recs, "org.agent-session.acp/terminal_cancel_response")) != 1 {
		t.Error("terminal/cancel and its response are not audit records")
	}
}

func TestArchiveEndsOpenSession(t *testing.T) {
	outs := mapFixture(t, "archive_unarchive")
	noNonconforming(t, outs)
	recs := records(t, outs, "s1")
	var kinds []string
	for _, r := range recs[1:] {
		k := r["type"].(string)
		if k == "state" {
			k += ":" + r["state"].(string)
		}
		kinds = append(kinds, strings.TrimPrefix(k, "org.agent-session.acp/"))
	}
	want := []string{"session_archive", "session_archive_response", "state:ended", "session_unarchive", "session_unarchive_response", "session_archive", "session_archive_response"}
	if !slices.Equal(kinds, want) {
		t.Errorf("records %v, want %v", kinds, want)
	}
}

func TestSessionStatusIsNoTransition(t *testing.T) {
	outs := mapFixture(t, "session_status")
	noNonconforming(t, outs)
	recs := records(t, outs, "s1")
	if len(ofType(recs, "state")) != 0 {
		t.Error("a status snapshot was recorded as a state")
	}
	if len(ofType(recs, "org.agent-session.acp/session_status_response")) != 1 {
		t.Error("no session_status_response audit record")
	}
}

func TestASR710_CommandUnionVendorKept(t *testing.T) {
	outs := mapFixture(t, "available_commands_union")
	noNonconforming(t, outs)
	a := ofType(records(t, outs, "s1"), "org.agent-session.acp/available_commands_update")
	if len(a) != 1 || !strings.Contains(js(a[0]), `"steps":["build","push"]`) || !strings.Contains(js(a[0]), `"type":"_acme_macro"`) {
		t.Errorf("audit = %s, want the vendor command verbatim", js(a))
	}
}

func TestASR735_SenderMessageID(t *testing.T) {
	outs := mapFixture(t, "session_message_ids")
	noNonconforming(t, outs)
	msgs := ofType(records(t, outs, "s1"), "message")
	if len(msgs) != 1 || js(msgs[0]["from"]) != `{"_org.acptap/messageId":"out1","session":"s2"}` {
		t.Fatalf("message = %s, want from s2 with its message id", js(msgs))
	}
	out := ofType(records(t, outs, "s2"), "org.agent-session.acp/session_message")
	if len(out) != 2 || !strings.Contains(js(out[1]), `"recipientMessageId":"in1"`) {
		t.Errorf("sender's audit records = %s", js(out))
	}
}

func TestASR711_SubagentRoots(t *testing.T) {
	outs := mapFixture(t, "subagent_roots")
	noNonconforming(t, outs)
	h := records(t, outs, "s3")[0]
	if got := js(h["workspace"]); !strings.Contains(got, `"/w/proj/sub"`) || !strings.Contains(got, `"/w/lib"`) {
		t.Errorf("child workspace = %s, want the subagent_update's cwd and additional directory", got)
	}
	if got := js(h["lineage"]); !strings.Contains(got, `"spawnedBy":{"evidence":"native_field","session":"s1"}`) {
		t.Errorf("child lineage = %s", got)
	}
}

func TestASR735_ChunksBeforeTheirUpsert(t *testing.T) {
	outs := mapFixture(t, "session_message_chunks_first")
	noNonconforming(t, outs)
	recs := records(t, outs, "s1")
	// in1 begins at its first chunk, before a1; its text chunks are joined.
	msgs := ofType(recs, "message")
	if len(msgs) != 2 || msgs[0]["messageId"] != "in1" || js(msgs[0]["content"]) != `[{"text":"Status?","type":"text"}]` ||
		js(msgs[0]["from"]) != `{"_org.acptap/messageId":"out1","session":"s2"}` || msgs[0]["assembly"] != "chunks" {
		t.Errorf("messages = %s, want in1 from its held chunks first", js(msgs))
	}
	lost := ofType(recs, "org.agent-session.acp/session_message_chunk")
	if len(lost) != 1 || !strings.Contains(js(lost[0]), "never named") {
		t.Errorf("unnamed chunk = %s, want one audit record", js(lost))
	}
	out := ofType(records(t, outs, "s2"), "org.agent-session.acp/session_message_chunk")
	if len(out) != 1 {
		t.Errorf("sending side's held chunk: %d audit records, want 1", len(out))
	}
}

func TestASR716_PermissionCancelled(t *testing.T) {
	outs := mapFixture(t, "permission_cancelled")
	noNonconforming(t, outs)
	p := ofType(records(t, outs, "s1"), "permission")
	if len(p) == 0 || p[len(p)-1]["decision"] != "cancelled" || p[len(p)-1]["status"] != "resolved" {
		t.Errorf("permission = %s, want resolved, decision cancelled", js(p))
	}
}

func TestAuthStatusNotRecorded(t *testing.T) {
	outs := mapFixture(t, "auth_status")
	if d := diags(outs); len(d) != 0 {
		t.Errorf("diagnostics: %v", d)
	}
	if strings.Contains(string(render(outs)), "accounts") {
		t.Error("auth status reached a stream")
	}
}

func TestNonconformingAgainstAlpha13(t *testing.T) {
	outs := mapFixture(t, "nonconforming_alpha9_shape")
	if !slices.Contains(lossyOf(records(t, outs, "s1")), "_org.acptap/nonconforming_frames") {
		t.Error("an untyped command was not declared nonconforming")
	}
}

// lossyOf gathers the header's lossy and every declaration's.
func lossyOf(recs []map[string]any) []string {
	var out []string
	for _, r := range recs {
		var l any
		if p, ok := r["producer"].(map[string]any); ok {
			l = p["lossy"]
		} else if r["type"] == "declaration" {
			l = r["lossy"]
		}
		if a, ok := l.([]any); ok {
			for _, x := range a {
				out = append(out, x.(string))
			}
		}
	}
	return out
}

// TestConformanceSuite runs sdk/mappertest's suite over the plugin with
// every fixture as its corpus.
func TestConformanceSuite(t *testing.T) {
	corpus := map[string][]sdk.Frame{}
	for name, text := range fixtures {
		corpus[name] = parseFrames(t, text)
	}
	mappertest.Suite{New: New, Start: live, Corpus: corpus}.Run(t)
}

// TestPendingRequestsBounded: requests that are never answered are
// followed up to maxPending; past it the oldest is forgotten, with a
// diagnostic, so memory does not grow with them.
func TestPendingRequestsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(opening)
	for i := 0; i < maxPending+10; i++ {
		fmt.Fprintf(&b, "c2a {\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"session/status\",\"params\":{\"sessionId\":\"s1\"}}\n", 100+i)
	}
	frames := parseFrames(t, b.String())
	cfg, _ := acpasr.ParseConfig(nil)
	tr := newTranslator(options(cfg), live)
	outs, err := tr.Map(t.Context(), frames)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.pending) != maxPending || len(tr.order) > 2*maxPending {
		t.Errorf("pending %d, order %d; want %d and at most %d", len(tr.pending), len(tr.order), maxPending, 2*maxPending)
	}
	n := 0
	for _, o := range outs {
		if o.Kind == sdk.Diagnostic && o.Summary == "too many requests awaiting a response" {
			n++
		}
	}
	if n != 10 {
		t.Errorf("%d diagnostics, want 10", n)
	}
}
