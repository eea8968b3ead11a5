package acpv2

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acptap/acptap/internal/replay"
	"github.com/acptap/acptap/plugins/internal/acpreplay"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
	"github.com/acptap/acptap/sdk/mappertest"
)

// TestReplayInfoClaimsReplay: the plugin says it can replay, and is a Replayer
// in process and over gRPC.
func TestReplayInfoClaimsReplay(t *testing.T) {
	for name, m := range map[string]sdk.Mapper{"in process": New(), "over gRPC": mappertest.OverGRPC(t, New())} {
		info, err := m.Info(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(info.Capabilities, "replay") {
			t.Errorf("%s: capabilities %v lack replay", name, info.Capabilities)
		}
		if _, ok := m.(sdk.Replayer); !ok {
			t.Errorf("%s: %T is not an sdk.Replayer", name, m)
		}
	}
}

// TestASR724_ActivePathLatestRevisionIDsPreserved: entities come in path
// order (the order of their first records), each with its latest revision,
// and every ID that maps to an ACP ID is kept.
func TestASR724_ActivePathLatestRevisionIDsPreserved(t *testing.T) {
	s := goldenStreams(t)["full/sess-42"]
	us := runReplay(t, New(), s).updates(t)
	var ids []string
	for _, u := range us {
		id := ""
		for _, k := range []string{"messageId", "toolCallId", "terminalId", "compactionId"} {
			if v := str(u[k]); v != "" {
				id = v
			}
		}
		if p, ok := u["plan"].(map[string]any); ok {
			id = str(p["planId"])
		}
		ids = append(ids, str(u["sessionUpdate"])+" "+id)
	}
	want := []string{
		"user_message user-1", "plan_update plan-1", "tool_call_update call-mv", "tool_call_update call-test",
		"terminal_update term-1", "agent_message asst-1", "user_message user-2", "compaction_update cmp-1",
		"session_info_update ", "usage_update ", "state_update ",
	}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("updates (-want +got):\n%s", diff)
	}
	if got := js(byID(us, "asst-1")["content"]); !strings.Contains(got, "(revised)") {
		t.Errorf("asst-1 is not its latest revision: %s", got)
	}
	if got := js(byID(us, "plan-1")["plan"]); !strings.Contains(got, `"status":"completed","content":"Rename"`) && !strings.Contains(got, `"content":"Rename","priority":"high","status":"completed"`) {
		t.Errorf("plan-1 is not its latest revision: %s", got)
	}
	for _, u := range us {
		if str(u["sessionUpdate"]) == "" {
			t.Errorf("update without a kind: %s", js(u))
		}
	}
}

// TestASR724_RevisionBeforeFirstRecordNotReordered: a revision written
// much later does not move its entity; the entity appears once.
func TestASR724_RevisionBeforeFirstRecordNotReordered(t *testing.T) {
	s := mkStream(t, testHeader,
		`{"type":"message","messageId":"a","role":"user","content":[{"type":"text","text":"first"}]}`,
		`{"type":"message","messageId":"b","role":"assistant","content":[{"type":"text","text":"second"}]}`,
		`{"type":"message","messageId":"a","role":"user","supersedes":"r1","content":[{"type":"text","text":"first, edited"}]}`,
		`{"type":"message","messageId":"a","role":"user","supersedes":"r3","content":[{"type":"text","text":"first, edited twice"}]}`,
	)
	us := runReplay(t, New(), s).updates(t)
	if diff := cmp.Diff([]string{"user_message", "agent_message"}, kinds(us)); diff != "" {
		t.Fatalf("kinds (-want +got):\n%s", diff)
	}
	if got := js(us[0]["content"]); got != `[{"text":"first, edited twice","type":"text"}]` {
		t.Errorf("a = %s, want its latest revision", got)
	}
}

// TestASR725_WholeEntityUpsertsNeverChunks: only whole-entity upserts, one
// per entity, for every stream in testdata.
func TestASR725_WholeEntityUpsertsNeverChunks(t *testing.T) {
	streams := goldenStreams(t)
	streams["every"] = everyType(t)
	upserts := []string{"user_message", "agent_message", "agent_thought", "tool_call_update", "plan_update",
		"compaction_update", "terminal_update", "session_info_update", "usage_update", "state_update"}
	for name, s := range streams {
		if !bytes.HasPrefix(s, []byte(`{"type":"header"`)) {
			continue
		}
		us := runReplay(t, New(), s).updates(t)
		seen := map[string]bool{}
		for _, u := range us {
			k := str(u["sessionUpdate"])
			if strings.HasSuffix(k, "_chunk") || !slices.Contains(upserts, k) {
				t.Errorf("%s: update %s is not a whole-entity upsert", name, js(u))
			}
			id := k + " " + str(u["messageId"]) + str(u["toolCallId"]) + str(u["terminalId"]) + str(u["compactionId"]) + js(u["plan"])
			if seen[id] {
				t.Errorf("%s: entity sent twice: %s", name, id)
			}
			seen[id] = true
		}
	}
}

// TestASR726_NothingReExecuted: the replay is only session/update
// notifications: no request (no permission, no elicitation, no terminal
// or fs method), and terminals are display-only snapshots.
func TestASR726_NothingReExecuted(t *testing.T) {
	rp := runReplay(t, New(), everyType(t))
	for _, f := range rp.frames {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(f, &m); err != nil {
			t.Fatal(err)
		}
		if _, has := m["id"]; has {
			t.Errorf("a request was sent: %s", f)
		}
		if string(m["method"]) != `"session/update"` {
			t.Errorf("not a session/update: %s", f)
		}
	}
	us := rp.updates(t)
	t1 := byID(us, "term-1")
	if t1 == nil || js(t1["output"]) != `{"data":"RkFJTAo="}` || js(t1["exitStatus"]) != `{"exitCode":1}` || str(t1["cwd"]) != "/w/lib" {
		t.Errorf("term-1 is not a snapshot of the exited terminal: %s", js(t1))
	}
	t2 := byID(us, "term-2")
	if t2 == nil || t2["exitStatus"] != nil || js(t2["output"]) != `{"data":"bGluZSAxCg=="}` {
		t.Errorf("term-2 (running, utf-8 output) = %s", js(t2))
	}
	for _, k := range []string{"permission", "input_request", "request_permission", "elicitation"} {
		for _, f := range rp.frames {
			if bytes.Contains(f, []byte(`"`+k)) {
				t.Errorf("%s sent again: %s", k, f)
			}
		}
	}
	if n := rp.report.Names(); !n[asr.LossPermission] || !n[asr.LossInputRequest] {
		t.Errorf("permission and input_request records not reported: %v", rp.report.Categories)
	}
}

// TestASR727_ReasoningPartsAsThoughtsBeforeMessage: reasoning parts of a
// message with other parts become agent_thoughts <id>#thought-<n> sent
// before it; refusals are text; a reasoning-only message is one
// agent_thought; opaque reasoning and signatures are never sent.
func TestASR727_ReasoningPartsAsThoughtsBeforeMessage(t *testing.T) {
	rp := runReplay(t, New(), everyType(t))
	us := rp.updates(t)
	var got []string
	for _, u := range us {
		if id := str(u["messageId"]); id == "m1" || strings.HasPrefix(id, "m1#") || id == "th1" || strings.HasPrefix(id, "m3") {
			got = append(got, str(u["sessionUpdate"])+" "+id+" "+js(u["content"]))
		}
	}
	want := []string{
		`agent_thought th1 [{"text":"The user wants x.go fixed.","type":"text"}]`,
		`agent_thought m1#thought-0 [{"text":"Check the import first.","type":"text"}]`,
		`agent_thought m1#thought-1 [{"text":"Tests fail\n\nReport it","type":"text"}]`,
		`agent_message m1 [{"text":"Fixed x.go.","type":"text"},{"text":"I will not touch /etc/hosts.","type":"text"}]`,
		`agent_message m3 [{"text":"ok","type":"text"}]`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	for _, f := range rp.frames {
		for _, secret := range []string{"ZW5jcnlwdGVk", "c2lnbmF0dXJl", "b3BhcXVl", `"reasoning"`, `"refusal"`} {
			if bytes.Contains(f, []byte(secret)) {
				t.Errorf("%s was sent: %s", secret, f)
			}
		}
	}
	if !rp.report.Names()[asr.LossReasoning] {
		t.Errorf("opaque reasoning not reported: %v", rp.report.Categories)
	}
}

// TestASR728_ToolStatusMap: completed → completed; failed, denied → failed;
// cancelled, interrupted → cancelled; unknown → other; vendor unchanged.
func TestASR728_ToolStatusMap(t *testing.T) {
	tests := []struct{ asr, acp string }{
		{"completed", "completed"}, {"failed", "failed"}, {"denied", "failed"}, {"cancelled", "cancelled"},
		{"interrupted", "cancelled"}, {"unknown", "other"}, {"_acme_paused", "_acme_paused"}, {"partial", ""},
	}
	for _, tt := range tests {
		t.Run(tt.asr, func(t *testing.T) {
			s := mkStream(t, testHeader,
				`{"type":"tool_call","callId":"c","name":"x"}`,
				`{"type":"tool_result","callId":"c","status":"`+tt.asr+`","raw":{"n":1}}`)
			us := runReplay(t, New(), s).updates(t)
			if len(us) != 1 {
				t.Fatalf("%d updates, want 1", len(us))
			}
			if got := str(us[0]["status"]); got != tt.acp {
				t.Errorf("status %q → %q, want %q", tt.asr, got, tt.acp)
			}
			if js(us[0]["rawOutput"]) != `{"n":1}` {
				t.Errorf("rawOutput = %s", js(us[0]["rawOutput"]))
			}
		})
	}
	t.Run("dangling call has no status", func(t *testing.T) {
		us := runReplay(t, New(), mkStream(t, testHeader, `{"type":"tool_call","callId":"c","name":"x","input":{"a":1}}`)).updates(t)
		if len(us) != 1 || us[0]["status"] != nil || js(us[0]["rawInput"]) != `{"a":1}` {
			t.Errorf("dangling call = %s", js(us))
		}
	})
}

// TestASR729_DiffsAbsolutePathsRedactedRootOmitted: a file change becomes
// a diff on its call with absolute paths rebuilt from the roots; under a
// root whose path is null the diff is omitted and the loss declared.
func TestASR729_DiffsAbsolutePathsRedactedRootOmitted(t *testing.T) {
	rp := runReplay(t, New(), everyType(t))
	us := rp.updates(t)
	c1 := byID(us, "c1")
	wantContent := `[{"content":{"text":"Edited x.go","type":"text"},"type":"content"},` +
		`{"changes":[{"fileType":"text","mimeType":"text/x-go","operation":"modify","path":"/w/lib/x.go"}],"patch":{"format":"git_patch","text":"diff --git a/x.go b/x.go\n--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n-a\n+b\n"},"type":"diff"},` +
		`{"changes":[{"oldPath":"/w/proj/old.go","operation":"move","path":"/w/proj/new.go"}],"type":"diff"}]`
	if got := js(c1["content"]); got != wantContent {
		t.Errorf("c1 content\n got %s\nwant %s", got, wantContent)
	}
	if got := js(c1["locations"]); got != `[{"line":3,"path":"/w/lib/x.go"},{"path":"/etc/hosts"}]` {
		t.Errorf("c1 locations = %s (the one under the redacted root must be left out)", got)
	}
	c7 := byID(us, "c7")
	if c7 == nil || c7["content"] != nil {
		t.Errorf("c7's diff under a redacted root was sent: %s", js(c7))
	}
	if !rp.report.Names()[asr.LossRedactedRoot] {
		t.Errorf("the omitted diff is not declared: %v", rp.report.Categories)
	}
	var omitted []string
	for _, o := range rp.report.Omitted {
		if o.Category == asr.LossRedactedRoot {
			omitted = append(omitted, o.Record)
		}
	}
	if diff := cmp.Diff([]string{"r8", "r27", "r37"}, omitted); diff != "" {
		t.Errorf("omitted under redacted roots (-want +got):\n%s", diff)
	}
	t.Run("windows root", func(t *testing.T) {
		h := `{"type":"header","asr":"0.1","sessionId":"s1","producer":{"method":"recorder","name":"t","lossy":[]},"workspace":{"roots":[{"id":"root0","path":"C:\\src\\app"}]}}`
		us := runReplay(t, New(), mkStream(t, h,
			`{"type":"tool_call","callId":"c","name":"x"}`,
			`{"type":"file_change","cause":{"callId":"c"},"changes":[{"op":"add","path":{"root":"root0","path":"pkg\\a.go"}}]}`)).updates(t)
		if got := js(us[0]["content"]); got != `[{"changes":[{"operation":"add","path":"C:\\src\\app\\pkg\\a.go"}],"type":"diff"}]` {
			t.Errorf("content = %s", got)
		}
	})
}

// TestASR730_NoNotices: notices are not replayed.
func TestASR730_NoNotices(t *testing.T) {
	for name, s := range map[string][]byte{"full": goldenStreams(t)["full/sess-42"], "every": everyType(t)} {
		rp := runReplay(t, New(), s)
		for _, f := range rp.frames {
			if bytes.Contains(f, []byte("notice")) {
				t.Errorf("%s: a notice was replayed: %s", name, f)
			}
		}
		if !rp.report.Names()[asr.LossNotices] {
			t.Errorf("%s: notices not in the report: %v", name, rp.report.Categories)
		}
	}
}

// TestASR731_LossReport: the report lists the categories of the replay-loss
// list the stream contained, and never presents the replay as complete.
func TestASR731_LossReport(t *testing.T) {
	rp := runReplay(t, New(), everyType(t))
	if rp.report.Complete || !strings.Contains(string(rp.raw), `"complete": false`) || rp.report.Note == "" {
		t.Errorf("the report presents the replay as complete: %s", rp.raw)
	}
	var got []string
	for _, c := range rp.report.Categories {
		got = append(got, c.Category)
		if c.Records <= 0 {
			t.Errorf("category %s with %d records", c.Category, c.Records)
		}
	}
	want := []string{
		asr.LossAudit, asr.LossHistory, asr.LossNotices, asr.LossRedactedRoot, asr.LossUnknownTypes, asr.LossUnreplayable,
		asr.LossCapture, asr.LossCheckpoint, asr.LossConfigHistory, asr.LossDeclaration, asr.LossDelivery, asr.LossGap,
		asr.LossHook, asr.LossInference, asr.LossInputRequest, asr.LossInstructions, asr.LossLineage, asr.LossMemoryChange,
		asr.LossPermission, asr.LossReasoning, asr.LossRedaction, asr.LossSenders, asr.LossStateHistory, asr.LossTimestamps,
		asr.LossTombstone, asr.LossTurnTriggers, asr.LossVCS, asr.LossWorkspace,
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("categories (-want +got):\n%s", diff)
	}
	if rp.report.SessionID != "sess-every" || rp.report.Records != 69 || rp.report.Updates != len(rp.frames) || rp.report.Target != Input {
		t.Errorf("report header = %+v", rp.report)
	}
	if diff := cmp.Diff([]string{"inference", "message.author", "timestamps", "tool_result.content", "usage", "_org.agent-session.acp/tool_status_transitions"},
		rp.report.SourceLossy, cmpSorted); diff != "" {
		t.Errorf("sourceLossy (-want +got):\n%s", diff)
	}
	t.Run("a stream with nothing lost still is not complete", func(t *testing.T) {
		h := `{"type":"header","asr":"0.1","sessionId":"s1","producer":{"method":"recorder","name":"t","lossy":[]}}`
		rp := runReplay(t, New(), mkStream(t, h, `{"type":"message","messageId":"a","role":"user","content":[]}`))
		if rp.report.Complete || len(rp.report.Categories) != 0 || !strings.Contains(string(rp.raw), `"complete": false`) {
			t.Errorf("report = %s", rp.raw)
		}
	})
	t.Run("a report claiming completeness is refused", func(t *testing.T) {
		if _, err := replay.ParseLossReport([]byte(`{"complete":true,"categories":[]}`)); err == nil {
			t.Error("ParseLossReport accepted complete: true")
		}
	})
}

var cmpSorted = cmp.Transformer("sort", func(in []string) []string {
	out := slices.Clone(in)
	slices.Sort(out)
	return out
})

// TestASR732_RoundTrip: recording the replay of a stream gives the same
// context view, except for what the loss report names — for every stream
// the recorder tests produce (the golden files, and the fixtures mapped
// again) and for the stream with every record type, in process and with
// the plugin over gRPC.
func TestASR732_RoundTrip(t *testing.T) {
	streams := goldenStreams(t)
	frames, _ := filepath.Glob(filepath.Join(engineTestdata, "*.frames"))
	for _, f := range frames {
		name := strings.TrimSuffix(filepath.Base(f), ".frames")
		outs := mapAll(t, startReq(""), loadFrames(t, name))
		for _, s := range sessionsOf(outs) {
			streams["mapped:"+name+"/"+s] = streamOf(outs, s)
		}
	}
	streams["every"] = everyType(t)
	streams["undecodable"] = mkStream(t, testHeader,
		`{"type":"message","messageId":"a","role":"user","content":"not a list"}`,
		`{"type":"message","messageId":"b","role":"user","content":["not an object",{"type":"text","text":"ok"}]}`,
		`{"type":"tool_call","callId":"c","name":7}`,
		`{"type":"terminal","terminalId":"t","exitCode":0,"output":{"blob":{"encoding":"base64","data":"%%%"}}}`,
	)
	total := 0
	for _, transport := range []string{"in process", "over gRPC"} {
		m := New()
		if transport == "over gRPC" {
			m = mappertest.OverGRPC(t, New())
		}
		for name, s := range streams {
			t.Run(transport+"/"+name, func(t *testing.T) {
				if !bytes.HasPrefix(s, []byte(`{"type":"header"`)) {
					t.Skip("a continuation of a stored stream, not a whole stream")
				}
				res, _ := requireRoundTrip(t, m, s)
				total += res.Entities
			})
		}
	}
	if total == 0 {
		t.Fatal("the round trips compared no entities")
	}
}

// TestASR732_RoundTripDetectsDifferences: the check is not vacuous — an
// unreported loss and a changed entity are differences.
func TestASR732_RoundTripDetectsDifferences(t *testing.T) {
	s := everyType(t)
	src, err := replay.ReadStream(bytes.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	rp := runReplay(t, New(), s)
	// Drop the updates about c1 and change m1's text.
	var frames [][]byte
	for _, f := range rp.frames {
		if bytes.Contains(f, []byte(`"toolCallId":"c1"`)) {
			continue
		}
		frames = append(frames, bytes.Replace(f, []byte("Fixed x.go."), []byte("Fixed y.go."), 1))
	}
	outs := mappertest.Run(t, New(), startReq(""), resumeFrames(src.Header, frames), 0)
	rec, err := replay.ReadStream(bytes.NewReader(streamOf(outs, "sess-every")))
	if err != nil {
		t.Fatal(err)
	}
	report := rp.report
	report.Categories = slices.DeleteFunc(slices.Clone(report.Categories), func(c replay.Category) bool { return c.Category == asr.LossRedactedRoot })
	res := replay.Compare(src, rec, report)
	var got []string
	for _, d := range res.Differences {
		got = append(got, d.Entity+" "+d.Field)
	}
	slices.Sort(got)
	want := []string{"message:m1 content", "terminal:term-3 ", "tool:c1 ", "tool:c1 ", "tool:c7 "}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("differences (-want +got):\n%s\n%v", diff, res.Differences)
	}
}

// TestReplayAfterHistoryOrder: title, usage and the current state come
// after the history, once each, from their latest records; the recorder's
// own states (resumed, ended) are not ACP states.
func TestReplayAfterHistoryOrder(t *testing.T) {
	s := mkStream(t, testHeader,
		`{"type":"session_info","title":"old"}`,
		`{"type":"usage_summary","scope":"session","cumulative":true,"includesChildren":null,"contextWindow":{"used":1,"size":10}}`,
		`{"type":"state","state":"running"}`,
		`{"type":"message","messageId":"a","role":"user","content":[]}`,
		`{"type":"state","state":"requires_action"}`,
		`{"type":"session_info","title":"new"}`,
		`{"type":"usage_summary","scope":"session","cumulative":true,"includesChildren":null,"contextWindow":{"used":5,"size":10},"cost":{"amount":1.5,"currency":"EUR"}}`,
		`{"type":"state","state":"ended"}`,
		`{"type":"state","state":"resumed"}`,
	)
	rp := runReplay(t, New(), s)
	var got []string
	for _, u := range rp.updates(t) {
		got = append(got, js(u))
	}
	want := []string{
		`{"content":[],"messageId":"a","sessionUpdate":"user_message"}`,
		`{"sessionUpdate":"session_info_update","title":"new"}`,
		`{"cost":{"amount":1.5,"currency":"EUR"},"sessionUpdate":"usage_update","size":10,"used":5}`,
		`{"sessionUpdate":"state_update","state":"requires_action"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("updates (-want +got):\n%s", diff)
	}
}

// TestReplayGolden compares the replay of the stream with every record
// type (frames, then the loss report) with its golden file.
func TestReplayGolden(t *testing.T) {
	rp := runReplay(t, New(), everyType(t))
	var b bytes.Buffer
	for _, f := range rp.frames {
		b.Write(f)
		b.WriteByte('\n')
	}
	b.Write(rp.raw)
	path := filepath.Join("testdata", "replay_every_type.acp.golden")
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), b.String()); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}

// TestReplayDeterministicAcrossTransports: the same stream gives the same
// frames and report in process and over gRPC, whatever its size relative
// to the spool limit (spooled in memory, or to a temporary file).
func TestReplayDeterministicAcrossTransports(t *testing.T) {
	s := everyType(t)
	want := runReplay(t, New(), s)
	old := acpreplay.SpoolMemLimit
	defer func() { acpreplay.SpoolMemLimit = old }()
	for _, limit := range []int64{old, 100} {
		acpreplay.SpoolMemLimit = limit
		got := runReplay(t, mappertest.OverGRPC(t, New()), s)
		if diff := cmp.Diff(want.frames, got.frames); diff != "" {
			t.Errorf("spool limit %d: frames differ (-in process +gRPC):\n%s", limit, diff)
		}
		if diff := cmp.Diff(string(want.raw), string(got.raw)); diff != "" {
			t.Errorf("spool limit %d: report differs:\n%s", limit, diff)
		}
	}
}

// TestReplayBadInput: no header is an error; unreadable lines and an
// uncommitted tail are diagnostics and losses, never errors.
func TestReplayBadInput(t *testing.T) {
	rr := New().(sdk.Replayer)
	for _, in := range []string{"", `{"type":"message"}` + "\n", "not json\n"} {
		_, err := rr.Replay(context.Background(), nil, Input, strings.NewReader(in), func(sdk.Output) error { return nil })
		if err == nil {
			t.Errorf("Replay(%q): no error", in)
		}
	}
	if _, err := rr.Replay(context.Background(), nil, "acp/1", strings.NewReader(testHeader+"\n"), func(sdk.Output) error { return nil }); err == nil {
		t.Error("replay to acp/1 accepted")
	}
	if _, err := rr.Replay(context.Background(), []byte(`{"nope":1}`), Input, strings.NewReader(testHeader+"\n"), func(sdk.Output) error { return nil }); !errors.Is(err, ErrConfig) {
		t.Errorf("bad config: err = %v", err)
	}
	s := string(mkStream(t, testHeader, `{"type":"message","messageId":"a","role":"user","content":[]}`)) + "garbage\n" + `{"type":"message","seq":9,"id":"r9","messageId":"b","ro`
	rp := runReplay(t, New(), []byte(s))
	if len(rp.frames) != 1 || len(rp.diags) != 2 {
		t.Errorf("frames %d diags %d, want 1 and 2", len(rp.frames), len(rp.diags))
	}
	n := rp.report.Names()
	if !n[asr.LossUnreplayable] || !n[asr.LossUncommitted] {
		t.Errorf("categories = %v", rp.report.Categories)
	}
	t.Run("records that do not decode as their type", func(t *testing.T) {
		rp := runReplay(t, New(), mkStream(t, testHeader,
			`{"type":"message","messageId":"a","role":"user","content":"not a list"}`,
			`{"type":"message","messageId":"b","role":"user","content":["not an object",{"type":"text","text":"ok"}]}`,
			`{"type":"tool_call","callId":"c","name":7}`,
			`{"type":"terminal","terminalId":"t","exitCode":0,"output":{"blob":{"encoding":"base64","data":"%%%"}}}`,
		))
		if got := js(rp.updates(t)); got != `[{"content":[{"text":"ok","type":"text"}],"messageId":"b","sessionUpdate":"user_message"},{"exitStatus":{"exitCode":0},"sessionUpdate":"terminal_update","terminalId":"t"}]` {
			t.Errorf("updates = %s", got)
		}
		var omitted []string
		for _, o := range rp.report.Omitted {
			omitted = append(omitted, o.Record+" "+o.Reason)
		}
		want := []string{"r1 a record that does not decode as its type", "r2 a content part that is not an object",
			"r3 a record that does not decode as its type", "r4 terminal output that is not valid base64"}
		if diff := cmp.Diff(want, omitted); diff != "" {
			t.Errorf("omitted (-want +got):\n%s", diff)
		}
	})
	emitErr := fmt.Errorf("stop")
	_, err := rr.Replay(context.Background(), nil, Input, bytes.NewReader(everyType(t)), func(o sdk.Output) error { return emitErr })
	if !errors.Is(err, emitErr) {
		t.Errorf("emit error not returned: %v", err)
	}
}

// TestReplayLookaheadWindow: the output does not depend on how far the
// second pass looks ahead (what it does not see, the first pass indexed):
// every stream replays the same with a window of 1, 2, 3, 7 lines and the
// default.
func TestReplayLookaheadWindow(t *testing.T) {
	streams := goldenStreams(t)
	streams["every"] = everyType(t)
	streams["far revisions"] = mkStream(t, testHeader,
		`{"type":"tool_call","callId":"c","name":"x"}`,
		`{"type":"file_change","cause":{"callId":"c"},"changes":[{"op":"add","path":{"root":"root0","path":"a"}}]}`,
		`{"type":"file_change","cause":{"callId":"c"},"changes":[{"op":"add","path":{"root":"root0","path":"b"}}]}`,
		`{"type":"file_change","cause":{"callId":"c"},"supersedes":"r2","changes":[{"op":"add","path":{"root":"root0","path":"a2"}}]}`,
		`{"type":"message","messageId":"m","role":"assistant","content":[{"type":"text","text":"1"}]}`,
		`{"type":"tool_result","callId":"c","status":"failed"}`,
		`{"type":"file_change","cause":{"callId":"c"},"supersedes":"r4","changes":[{"op":"add","path":{"root":"root0","path":"a3"}}]}`,
		`{"type":"message","messageId":"m","role":"assistant","supersedes":"r5","content":[{"type":"text","text":"2"}]}`,
		`{"type":"file_change","cause":{"callId":"c"},"changes":[{"op":"add","path":{"root":"root0","path":"c"}}]}`,
		`{"type":"tool_call","callId":"c","name":"y","supersedes":"r1"}`,
		`{"type":"tool_result","callId":"c","status":"completed","supersedes":"r6"}`,
		`{"type":"message","messageId":"m","role":"assistant","supersedes":"r8","content":[{"type":"text","text":"3"}]}`,
		`{"type":"file_change","cause":{"callId":"c"},"supersedes":"r9","changes":[{"op":"add","path":{"root":"root0","path":"c2"}}]}`,
		`{"type":"tool_result","callId":"orphan","status":"completed"}`,
	)
	old := acpreplay.Window
	defer func() { acpreplay.Window = old }()
	for name, s := range streams {
		if !bytes.HasPrefix(s, []byte(`{"type":"header"`)) {
			continue
		}
		acpreplay.Window = old
		want := runReplay(t, New(), s)
		for _, w := range []int{1, 2, 3, 7} {
			acpreplay.Window = w
			got := runReplay(t, New(), s)
			if diff := cmp.Diff(want.frames, got.frames); diff != "" {
				t.Errorf("%s: window %d: frames differ (-default +small):\n%s", name, w, diff)
			}
			if diff := cmp.Diff(string(want.raw), string(got.raw)); diff != "" {
				t.Errorf("%s: window %d: report differs:\n%s", name, w, diff)
			}
		}
		if name == "far revisions" {
			acpreplay.Window = old
			us := want.updates(t)
			if got := js(us[0]); got != `{"content":[{"changes":[{"operation":"add","path":"/w/proj/a3"}],"type":"diff"},{"changes":[{"operation":"add","path":"/w/proj/b"}],"type":"diff"},{"changes":[{"operation":"add","path":"/w/proj/c2"}],"type":"diff"}],"name":"y","sessionUpdate":"tool_call_update","status":"completed","toolCallId":"c"}` {
				t.Errorf("far revisions: call = %s", got)
			}
			if got := js(us[1]["content"]); got != `[{"text":"3","type":"text"}]` {
				t.Errorf("far revisions: message = %s", got)
			}
		}
	}
}

// TestASR732_RoundTripACPv1Streams: streams the acpv1 plugin recorded from
// ACP v1 (its golden files: derived message ids, the session's one plan,
// client-side terminals, v1 diffs with their full texts) replay as ACP v2
// and record back to the same context view.
func TestASR732_RoundTripACPv1Streams(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "acpv1", "testdata", "*.golden.jsonl"))
	if len(files) == 0 {
		t.Fatal("no acpv1 golden files")
	}
	total := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var outs []sdk.Output
		for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
			var g struct {
				Kind    string          `json:"kind"`
				Session string          `json:"session"`
				JSON    json.RawMessage `json:"json"`
			}
			if err := json.Unmarshal(line, &g); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			switch g.Kind {
			case "asr-header":
				outs = append(outs, sdk.Output{Kind: sdk.ASRHeader, Session: g.Session, JSON: g.JSON})
			case "asr-record":
				outs = append(outs, sdk.Output{Kind: sdk.ASRRecord, Session: g.Session, JSON: g.JSON})
			}
		}
		for _, s := range sessionsOf(outs) {
			t.Run(filepath.Base(f)+"/"+s, func(t *testing.T) {
				res, rp := requireRoundTrip(t, New(), streamOf(outs, s))
				total += res.Entities
				if strings.HasPrefix(filepath.Base(f), "diff_file_change") {
					joined := string(bytes.Join(rp.frames, nil))
					if !strings.Contains(joined, `"org.acptap/oldText":"old\n"`) {
						t.Errorf("the replayed diff lost the full texts:\n%s", joined)
					}
				}
			})
		}
	}
	if total == 0 {
		t.Fatal("the round trips compared no entities")
	}
}
