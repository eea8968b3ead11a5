package acpasr

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTerminals: command, cwd as a PathRef, base64 chunks decoded and
// appended, an output snapshot replacing them, exit status → exited
// (decision 1); written when the turn ends.
func TestTerminals(t *testing.T) {
	tests := []struct {
		name    string
		updates []string
		want    string
	}{
		{"chunks then exit", []string{
			`{"sessionUpdate":"terminal_update","terminalId":"term-1","command":"go test ./...","cwd":"/w/proj/cmd"}`,
			`{"sessionUpdate":"terminal_output_chunk","terminalId":"term-1","data":"b2s="}`,
			`{"sessionUpdate":"terminal_output_chunk","terminalId":"term-1","data":"CkZBSUw="}`,
			`{"sessionUpdate":"terminal_update","terminalId":"term-1","exitStatus":{"exitCode":1,"signal":null}}`},
			`{"assembly":"chunks","command":"go test ./...","cwd":{"path":"cmd","root":"root0"},"exitCode":1,"output":{"blob":{"data":"b2sKRkFJTA==","encoding":"base64"}},"status":"exited","terminalId":"term-1","type":"terminal"}`},
		{"snapshot resets chunks, still running", []string{
			`{"sessionUpdate":"terminal_output_chunk","terminalId":"t2","data":"eHh4"}`,
			`{"sessionUpdate":"terminal_update","terminalId":"t2","output":{"data":"eQ=="},"_meta":{"k":1}}`},
			`{"_meta":{"k":1},"assembly":"folded","output":{"blob":{"data":"eQ==","encoding":"base64"}},"status":"running","terminalId":"t2","type":"terminal"}`},
		{"killed by a signal", []string{
			`{"sessionUpdate":"terminal_update","terminalId":"t3","command":"sleep 99","exitStatus":{"signal":"SIGKILL"}}`},
			`{"assembly":"folded","command":"sleep 99","signal":"SIGKILL","status":"exited","terminalId":"t3","type":"terminal"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var lines []string
			for _, u := range tt.updates {
				lines = append(lines, upd(u))
			}
			rs := records(t, mapAll(t, startReq(""), parseFrames(t, opened(append(lines, idle)...))), "s1")
			if got := types(rs); !cmp.Equal(got, []string{"header", "terminal", "state"}) {
				t.Fatalf("types = %v (a terminal is written when the turn ends)", got)
			}
			if got := js(strip(rs[1])); got != js(decode(tt.want)) {
				t.Errorf("terminal = %s\nwant       %s", got, js(decode(tt.want)))
			}
		})
	}
}

// TestPlans: a plan snapshot per planId, written at the turn's end; a later
// update supersedes; _meta as sent; plans without entries are audited.
func TestPlans(t *testing.T) {
	rs := records(t, mapAll(t, startReq(""), parseFrames(t, opened(
		upd(`{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p","entries":[{"content":"read","priority":"high","status":"in_progress"}]},"_meta":{"a":1}}`),
		upd(`{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p","entries":[{"content":"read","priority":"high","status":"completed"}]}}`),
		idle,
		upd(`{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p","entries":[{"content":"read","priority":"high","status":"_acme_skipped"}]}}`),
		upd(`{"sessionUpdate":"plan_update","plan":{"type":"markdown","planId":"md","content":"# Plan"}}`),
		idle,
	))), "s1")
	plans := ofType(rs, "plan")
	want := []string{
		`{"entries":[{"content":"read","priority":"high","status":"completed"}],"planId":"p","planType":"items","type":"plan"}`,
		`{"entries":[{"content":"read","priority":"high","status":"_acme_skipped"}],"planId":"p","planType":"items","supersedes":"r1","type":"plan"}`,
	}
	var got []string
	for _, p := range plans {
		got = append(got, js(strip(p)))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("plans (-want +got):\n%s", diff)
	}
	if n := len(ofType(rs, "org.agent-session.acp/plan_update")); n != 1 {
		t.Errorf("%d audited markdown plans, want 1", n)
	}
}

// TestASR719_Compaction: compactionId, kind summary, status, summary (or
// capture.summary absent), replaces.throughId = the last context record
// before it; written when final.
func TestASR719_Compaction(t *testing.T) {
	rs := records(t, mapAll(t, startReq(""), parseFrames(t, opened(
		upd(chunkA),
		upd(`{"sessionUpdate":"compaction_update","compactionId":"c1","status":"in_progress"}`),
		upd(`{"sessionUpdate":"compaction_summary_chunk","compactionId":"c1","content":{"type":"text","text":"Earlier: "}}`),
		upd(`{"sessionUpdate":"compaction_summary_chunk","compactionId":"c1","content":{"type":"text","text":"fixed main.go"}}`),
		upd(`{"sessionUpdate":"compaction_update","compactionId":"c1","status":"completed"}`),
		upd(`{"sessionUpdate":"compaction_update","compactionId":"c2","status":"failed","error":"too long","_meta":{"x":1}}`),
		idle,
	))), "s1")
	var got []string
	for _, r := range rs[1:] {
		got = append(got, js(strip(r)))
	}
	want := []string{
		`{"assembly":"chunks","content":[{"text":"a","type":"text"}],"messageId":"m","role":"assistant","type":"message"}`,
		`{"assembly":"chunks","compactionId":"c1","kind":"summary","replaces":{"throughId":"r1"},"status":"completed","summary":[{"text":"Earlier: fixed main.go","type":"text"}],"type":"compaction"}`,
		`{"_meta":{"x":1},"assembly":"folded","capture":{"summary":{"state":"absent"}},"compactionId":"c2","error":"too long","kind":"summary","replaces":{"throughId":"r2"},"status":"failed","type":"compaction"}`,
		`{"state":"idle","stopReason":"end_turn","type":"state"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
}

// TestASR720_Usage: usage_update → usage_summary, session scope,
// cumulative, includesChildren null, the context window, the cost.
func TestASR720_Usage(t *testing.T) {
	rs := records(t, mapAll(t, startReq(""), parseFrames(t, opened(
		upd(`{"sessionUpdate":"usage_update","used":53000,"size":200000,"cost":{"amount":0.42,"currency":"USD"}}`),
		upd(`{"sessionUpdate":"usage_update","used":1,"size":2,"cost":null}`),
	))), "s1")
	var got []string
	for _, r := range ofType(rs, "usage_summary") {
		got = append(got, js(strip(r)))
	}
	want := []string{
		`{"contextWindow":{"size":200000,"used":53000},"cost":{"amount":0.42,"currency":"USD"},"cumulative":true,"includesChildren":null,"scope":"session","type":"usage_summary"}`,
		`{"contextWindow":{"size":2,"used":1},"cumulative":true,"includesChildren":null,"scope":"session","type":"usage_summary"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}

// TestSessionInfoConfigNotice: session_info title (null clears, updatedAt
// not recorded), config_change with model and mode, notices as harness
// messages with a derived id (decision 5).
func TestSessionInfoConfigNotice(t *testing.T) {
	rs := records(t, mapAll(t, startReq(""), parseFrames(t, opened(
		upd(`{"sessionUpdate":"session_info_update","title":"Fix bug","updatedAt":"2026-10-26T14:30:00Z"}`),
		upd(`{"sessionUpdate":"session_info_update","updatedAt":"2026-10-26T14:31:00Z"}`),
		upd(`{"sessionUpdate":"session_info_update","title":null}`),
		upd(`{"sessionUpdate":"config_option_update","configOptions":[{"configId":"m","name":"Model","category":"model","type":"select","currentValue":"opus","options":[]},{"configId":"mode","name":"Mode","category":"mode","type":"select","currentValue":"plan","options":[]},{"configId":"t","name":"Think","category":"thought_level","type":"boolean","currentValue":true}]}`),
		upd(`{"sessionUpdate":"notice","severity":"warning","title":"Rate limited","description":"Retrying in 5s","_meta":{"n":1}}`),
		`a2c [{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"notice","severity":"info","title":"A"}}},{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"notice","severity":"info","title":"B"}}}]`,
	))), "s1")
	var got []string
	for _, r := range rs[1:] {
		got = append(got, js(strip(r)))
	}
	want := []string{
		`{"title":"Fix bug","type":"session_info"}`,
		`{"title":null,"type":"session_info"}`,
		`{"mode":"plan","model":{"id":"opus"},"options":[{"category":"model","configId":"m","currentValue":"opus","name":"Model","options":[],"type":"select"},{"category":"mode","configId":"mode","currentValue":"plan","name":"Mode","options":[],"type":"select"},{"category":"thought_level","configId":"t","currentValue":true,"name":"Think","type":"boolean"}],"type":"config_change"}`,
		`{"audience":"user","author":"harness","content":[{"text":"Rate limited","type":"text"},{"text":"Retrying in 5s","type":"text"}],"idSource":"derived","messageId":"notice:0:9","origin":"notice","severity":"warning","type":"message"}`,
		`{"audience":"user","author":"harness","content":[{"text":"A","type":"text"}],"idSource":"derived","messageId":"notice:0:10.0","origin":"notice","severity":"info","type":"message"}`,
		`{"audience":"user","author":"harness","content":[{"text":"B","type":"text"}],"idSource":"derived","messageId":"notice:0:10.1","origin":"notice","severity":"info","type":"message"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
}
