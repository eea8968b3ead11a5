package acpasr

import (
	"bytes"
	"strings"
	"testing"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr/asrcheck"
	"github.com/google/go-cmp/cmp"
)

// Tests of a session across connections: resume with history replay
// (ASR-707, ASR-717), connection numbers (ASR-716), forks (ASR-718).

// streamLines is a session's stream as the store would hold it: the header
// and record lines of outs (several connections' outputs in order).
func streamLines(outs []sdk.Output, session string) [][]byte {
	var lines [][]byte
	for _, o := range outs {
		if (o.Kind == sdk.ASRHeader || o.Kind == sdk.ASRRecord) && o.Session == session {
			lines = append(lines, o.JSON)
		}
	}
	return lines
}

// validStreams validates each session's stream (its lines across the given
// connections' outputs) with the ASR validator.
func validStreams(t *testing.T, sessions []string, outs ...[]sdk.Output) {
	t.Helper()
	for _, id := range sessions {
		var all [][]byte
		for _, o := range outs {
			all = append(all, streamLines(o, id)...)
		}
		if _, err := asrcheck.Validate(bytes.NewReader(joinLines(all)), func(p asrcheck.Problem) {
			t.Errorf("stream %s: %s", id, p)
		}); err != nil {
			t.Errorf("stream %s: %v", id, err)
		}
	}
}

// sessionLine is a fixture line for the session frame the host sends before
// the first frame that names a session on a connection.
func sessionLine(id string, connections int, prior [][]byte) string {
	var b strings.Builder
	b.WriteString(`session {"id":"` + id + `","connections":`)
	b.WriteString(js(connections))
	b.WriteString(`,"prior":[`)
	for i, l := range prior {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(l)
	}
	b.WriteString(`]}`)
	return b.String()
}

// updIn builds an agent → client session/update line for any session.
func updIn(session, update string) string {
	return `a2c {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + session + `","update":` + update + `}}`
}

// summary renders the records of a stream as one line each: type, entity
// id, supersedes, time fields present, copiedFrom.
func summary(rs []rec) []string {
	var out []string
	for _, r := range rs {
		if r["type"] == "header" {
			continue
		}
		key := ""
		for _, k := range []string{"messageId", "callId", "planId", "terminalId", "compactionId", "requestId", "childSession", "state", "localThroughId"} {
			if v, ok := r[k].(string); ok {
				key = k + "=" + v
				break
			}
		}
		if c, ok := r["cause"].(map[string]any); ok && key == "" {
			key = "cause=" + str(c["callId"])
		}
		line := str(r["id"]) + " " + str(r["type"])
		if key != "" {
			line += " " + key
		}
		if s := str(r["supersedes"]); s != "" {
			line += " supersedes=" + s
		}
		switch {
		case r["ts"] != nil && r["observedAt"] != nil:
			line += " ts(" + str(r["tsSource"]) + ")+observedAt"
		case r["ts"] != nil:
			line += " ts(" + str(r["tsSource"]) + ")"
		case r["observedAt"] != nil:
			line += " observedAt"
		}
		if c, ok := r["copiedFrom"].(map[string]any); ok {
			line += " copiedFrom=" + str(c["session"]) + "/" + str(c["record"]) + "/" + str(c["proof"])
		}
		out = append(out, line)
	}
	return out
}

func checkSummary(t *testing.T, what string, rs []rec, want []string) {
	t.Helper()
	if diff := cmp.Diff(want, summary(rs)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}

// The first connection of the resume tests: one turn with a prompt, a
// chunked message, a tool call with a permission, a plan, a terminal,
// usage, an audit-only update, a notice and a compaction.
var firstConnection = []string{initReq, initResp, newReq, newResp,
	`c2a {"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"fix it"}]}}`,
	upd(`{"sessionUpdate":"user_message_chunk","messageId":"u1","content":{"type":"text","text":"fix it"}}`),
	`a2c {"jsonrpc":"2.0","id":2,"result":{"messageId":"u1"}}`,
	upd(`{"sessionUpdate":"state_update","state":"running"}`),
	upd(`{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"Hello "}}`),
	upd(`{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"world"}}`),
	upd(`{"sessionUpdate":"tool_call_update","toolCallId":"c1","name":"edit","title":"Edit","kind":"edit","status":"pending","rawInput":{"path":"/w/proj/a.go"}}`),
	permReq("0", `{"type":"tool_call","toolCall":{"toolCallId":"c1"}}`),
	`c2a {"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"yes"}}}`,
	upd(`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","content":[{"type":"content","content":{"type":"text","text":"done"}}]}`),
	upd(`{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p1","entries":[{"content":"edit","priority":"high","status":"completed"}]}}`),
	upd(`{"sessionUpdate":"terminal_update","terminalId":"term-1","command":"ls","cwd":"/w/proj"}`),
	upd(`{"sessionUpdate":"terminal_output_chunk","terminalId":"term-1","data":"aGk="}`),
	upd(`{"sessionUpdate":"terminal_update","terminalId":"term-1","exitStatus":{"exitCode":0}}`),
	upd(`{"sessionUpdate":"usage_update","used":10,"size":100}`),
	upd(`{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"review","description":"Review"}]}`),
	upd(`{"sessionUpdate":"notice","severity":"info","title":"Heads up"}`),
	upd(`{"sessionUpdate":"compaction_update","compactionId":"cmp1","status":"in_progress"}`),
	upd(`{"sessionUpdate":"compaction_summary_chunk","compactionId":"cmp1","content":{"type":"text","text":"sum"}}`),
	upd(`{"sessionUpdate":"compaction_update","compactionId":"cmp1","status":"completed","summary":[{"type":"text","text":"sum"}]}`),
	idle,
}

// replayedHistory is what the agent replays of firstConnection on
// session/resume: whole upserts where the first connection saw chunks, the
// plan with different final content, and two entities never recorded.
var replayedHistory = []string{
	upd(`{"sessionUpdate":"user_message_chunk","messageId":"u1","content":{"type":"text","text":"fix it"}}`),
	upd(`{"sessionUpdate":"state_update","state":"running"}`),
	upd(`{"sessionUpdate":"agent_message","messageId":"m1","content":[{"type":"text","text":"Hello world"}]}`),
	upd(`{"sessionUpdate":"tool_call_update","toolCallId":"c1","name":"edit","title":"Edit","kind":"edit","status":"pending","rawInput":{"path":"/w/proj/a.go"}}`),
	upd(`{"sessionUpdate":"state_update","state":"requires_action"}`),
	upd(`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","content":[{"type":"content","content":{"type":"text","text":"done"}}]}`),
	upd(`{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p1","entries":[{"content":"edit","priority":"high","status":"cancelled"}]}}`),
	upd(`{"sessionUpdate":"terminal_update","terminalId":"term-1","command":"ls","cwd":"/w/proj","output":{"data":"aGk="},"exitStatus":{"exitCode":0}}`),
	upd(`{"sessionUpdate":"usage_update","used":10,"size":100}`),
	upd(`{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"review","description":"Review"}]}`),
	upd(`{"sessionUpdate":"notice","severity":"info","title":"Heads up"}`),
	upd(`{"sessionUpdate":"compaction_update","compactionId":"cmp1","status":"completed","summary":[{"type":"text","text":"sum"}]}`),
	upd(`{"sessionUpdate":"agent_message","messageId":"m2","content":[{"type":"text","text":"never recorded"}],"_meta":{"timestamp":"2026-10-01T08:00:00.5+02:00"}}`),
	upd(`{"sessionUpdate":"agent_message","messageId":"m3","content":[{"type":"text","text":"never recorded either"}]}`),
	idle,
}

const resumeReq = `c2a {"jsonrpc":"2.0","id":1,"method":"session/resume","params":{"sessionId":"s1","cwd":"/w/proj","replayFrom":{"type":"start"}}}`

// TestASR717_ResumeReplay: on a second connection, session/resume with
// replayFrom: the replayed history writes no second record for an entity
// already recorded (same final content, whether from chunks or whole),
// a superseding record for the plan whose final content differs,
// observedAt-only records for entities never recorded (ts from a source
// time in _meta), nothing for audit records, notices and latest-wins
// values already recorded, then the current state, then state resumed
// (ASR-707). Live traffic after it continues the stream.
func TestASR717_ResumeReplay(t *testing.T) {
	first := mapAll(t, startReq(""), parseFrames(t, wire(firstConnection...)))
	prior := streamLines(first, "s1")
	checkSummary(t, "first connection", records(t, first, "s1"), []string{
		"r1 state state=running ts(recorder)",
		"r2 permission requestId=0:0 ts(recorder)",
		"r3 permission requestId=0:0 supersedes=r2 ts(recorder)",
		"r4 message messageId=u1 ts(recorder)",
		"r5 message messageId=m1 ts(recorder)",
		"r6 declaration ts(recorder)",
		"r7 tool_call callId=c1 ts(recorder)",
		"r8 tool_result callId=c1 ts(recorder)",
		"r9 usage_summary ts(recorder)",
		"r10 org.agent-session.acp/available_commands_update ts(recorder)",
		"r11 message messageId=notice:0:21 ts(recorder)",
		"r12 plan planId=p1 ts(recorder)",
		"r13 terminal terminalId=term-1 ts(recorder)",
		"r14 compaction compactionId=cmp1 ts(recorder)",
		"r15 state state=idle ts(recorder)",
	})
	lines := []string{initReq, initResp, sessionLine("s1", 1, prior), resumeReq}
	lines = append(lines, replayedHistory...)
	lines = append(lines,
		upd(`{"sessionUpdate":"state_update","state":"idle"}`), // the current state, before the response
		`a2c {"jsonrpc":"2.0","id":1,"result":{}}`,
		permReq("0", `{"type":"tool_call","toolCall":{"toolCallId":"c2"}}`),
		`c2a {"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"no"}}}`,
		idle,
	)
	second := mapAll(t, startReq(""), parseFrames(t, wire(lines...)))
	golden(t, "resume_replay", second)
	rs := records(t, second, "s1")
	checkSummary(t, "second connection", rs, []string{
		"r16 plan planId=p1 supersedes=r12 observedAt",
		"r17 message messageId=m2 ts(source)+observedAt",
		"r18 message messageId=m3 observedAt",
		"r19 state state=idle observedAt",
		"r20 state state=resumed ts(recorder)",
		"r21 permission requestId=1:0 ts(recorder)",
		"r22 permission requestId=1:0 supersedes=r21 ts(recorder)",
		"r23 state state=idle ts(recorder)",
	})
	if got := str(rs[1]["ts"]); got != "2026-10-01T06:00:00.500Z" {
		t.Errorf("source time = %q, want the _meta timestamp in UTC", got)
	}
	if n := len(summaries(second)); n != 0 {
		t.Errorf("diagnostics: %v", summaries(second))
	}
	validStreams(t, []string{"s1"}, first, second)
}

// TestASR717_ReplayTwiceOnOneConnection: a second replay on the same
// connection (the client resumes again) writes nothing new, and a change
// in it supersedes the record of the first replay.
func TestASR717_ReplayTwiceOnOneConnection(t *testing.T) {
	lines := append([]string{}, firstConnection...)
	for i, change := range []bool{false, true} {
		id := js(10 + i)
		lines = append(lines, strings.Replace(resumeReq, `"id":1`, `"id":`+id, 1))
		for _, l := range firstConnection[4:] {
			if strings.Contains(l, `"sessionUpdate"`) {
				if change && strings.Contains(l, `"text":"world"`) {
					l = strings.Replace(l, "world", "there", 1)
				}
				lines = append(lines, l)
			}
		}
		lines = append(lines, `a2c {"jsonrpc":"2.0","id":`+id+`,"result":{}}`)
	}
	rs := records(t, mapAll(t, startReq(""), parseFrames(t, wire(lines...))), "s1")
	checkSummary(t, "stream", rs[16:], []string{
		"r16 state state=resumed ts(recorder)",
		"r17 message messageId=m1 supersedes=r5 observedAt",
		"r18 state state=resumed ts(recorder)",
	})
	if got := js(rs[17]["content"]); got != `[{"text":"Hello there","type":"text"}]` {
		t.Errorf("superseding content = %s", got)
	}
}

// TestASR707_ReplayedHistoryTimes: replayed records carry observedAt and no
// receipt ts; an update's _meta.timestamp is a source time (tsSource
// source); live records after the replay carry the receipt time.
func TestASR707_ReplayedHistoryTimes(t *testing.T) {
	rs := records(t, mapAll(t, startReq(""), parseFrames(t, wire(initReq, initResp, resumeReq,
		upd(`{"sessionUpdate":"agent_message","messageId":"a","content":[],"_meta":{"timestamp":"2026-09-30T23:59:59Z"}}`),
		upd(`{"sessionUpdate":"agent_message_chunk","messageId":"b","content":{"type":"text","text":"x"}}`),
		upd(`{"sessionUpdate":"agent_message","messageId":"b","_meta":{"timestamp":"not a time"}}`),
		upd(`{"sessionUpdate":"state_update","state":"idle"}`),
		`a2c {"jsonrpc":"2.0","id":1,"result":{}}`,
		upd(`{"sessionUpdate":"agent_message","messageId":"c","content":[],"_meta":{"timestamp":"2026-09-30T23:59:59Z"}}`),
		idle,
	))), "s1")
	checkSummary(t, "stream", rs, []string{
		"r1 message messageId=a ts(source)+observedAt",
		"r2 message messageId=b observedAt",
		"r3 state state=idle observedAt",
		"r4 state state=resumed ts(recorder)",
		"r5 message messageId=c ts(recorder)",
		"r6 state state=idle ts(recorder)",
	})
	if rs[1]["ts"] != "2026-09-30T23:59:59.000Z" || rs[5]["ts"] != "2026-10-26T14:30:41.215Z" {
		t.Errorf("ts = %v, %v", rs[1]["ts"], rs[5]["ts"])
	}
}

// TestASR716_ConnectionNumberAcrossConnections: <n> in derived ids is the
// number of connections that observed the session before (the session
// frame's Connections): 0, then 1, then 2, for the same JSON-RPC ids.
func TestASR716_ConnectionNumberAcrossConnections(t *testing.T) {
	turn := []string{
		permReq("0", `{"type":"command","command":"ls","cwd":"/w/proj"}`),
		`c2a {"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"yes"}}}`,
		`a2c {"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"sessionId":"s1","mode":"form","message":"Branch?","requestedSchema":{"type":"object"}}}`,
		`c2a {"jsonrpc":"2.0","id":1,"result":{"action":"decline"}}`,
		idle,
	}
	var store [][]byte
	var got []string
	for conn := 0; conn < 3; conn++ {
		lines := []string{initReq, initResp}
		if conn == 0 {
			lines = append(lines, newReq, newResp)
		} else {
			lines = append(lines, sessionLine("s1", conn, store),
				`c2a {"jsonrpc":"2.0","id":1,"method":"session/resume","params":{"sessionId":"s1","cwd":"/w/proj"}}`,
				`a2c {"jsonrpc":"2.0","id":1,"result":{}}`)
		}
		outs := mapAll(t, startReq(""), parseFrames(t, wire(append(lines, turn...)...)))
		store = append(store, streamLines(outs, "s1")...)
		for _, r := range records(t, outs, "s1") {
			if id := str(r["requestId"]); id != "" {
				got = append(got, str(r["id"])+" "+str(r["type"])+" "+id)
			}
		}
	}
	want := []string{
		"r1 permission 0:0", "r2 permission 0:0", "r3 input_request 0:1",
		"r6 permission 1:0", "r7 permission 1:0", "r8 input_request 1:1",
		"r11 permission 2:0", "r12 permission 2:0", "r13 input_request 2:1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("derived ids (-want +got):\n%s", diff)
	}
	if _, err := asrcheck.Validate(bytes.NewReader(joinLines(store)), func(p asrcheck.Problem) { t.Errorf("stream: %s", p) }); err != nil {
		t.Error(err)
	}
	if n := strings.Count(string(joinLines(store)), `"type":"header"`); n != 1 {
		t.Errorf("%d headers in the stream, want 1", n)
	}
}

func joinLines(lines [][]byte) []byte {
	var b []byte
	for _, l := range lines {
		b = append(b, l...)
		b = append(b, '\n')
	}
	return b
}

// forkTurn is s1's history in the fork tests: a prompt, a message, a tool
// call and a plan.
var forkTurn = []string{
	`c2a {"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"go"}]}}`,
	upd(`{"sessionUpdate":"user_message_chunk","messageId":"u1","content":{"type":"text","text":"go"}}`),
	`a2c {"jsonrpc":"2.0","id":2,"result":{"messageId":"u1"}}`,
	upd(`{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"ok"}}`),
	upd(`{"sessionUpdate":"tool_call_update","toolCallId":"c1","name":"run","status":"completed","rawOutput":{"exit":0}}`),
	upd(`{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p1","entries":[]}}`),
	idle,
}

// forkReplay is the fork's resume with replay of the copied history, then
// a local turn.
func forkReplay(extra ...string) []string {
	in := func(u string) string { return updIn("s1-fork", u) }
	lines := append([]string{}, extra...)
	return append(lines,
		`c2a {"jsonrpc":"2.0","id":6,"method":"session/resume","params":{"sessionId":"s1-fork","cwd":"/w/proj","replayFrom":{"type":"start"}}}`,
		in(`{"sessionUpdate":"user_message_chunk","messageId":"u1","content":{"type":"text","text":"go"}}`),
		in(`{"sessionUpdate":"agent_message","messageId":"m1","content":[{"type":"text","text":"ok"}]}`),
		in(`{"sessionUpdate":"tool_call_update","toolCallId":"c1","name":"run","status":"completed","rawOutput":{"exit":0}}`),
		in(`{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p1","entries":[]}}`),
		in(`{"sessionUpdate":"agent_message","messageId":"fork-only","content":[{"type":"text","text":"not in the parent"}]}`),
		in(`{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}`),
		`a2c {"jsonrpc":"2.0","id":6,"result":{}}`,
		`c2a {"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"s1-fork","prompt":[{"type":"text","text":"more"}]}}`,
		`a2c {"jsonrpc":"2.0","id":7,"result":{"messageId":"u2"}}`,
		in(`{"sessionUpdate":"agent_message","messageId":"m2","content":[{"type":"text","text":"local"}]}`),
		in(`{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}`),
	)
}

const (
	forkReq  = `c2a {"jsonrpc":"2.0","id":5,"method":"session/fork","params":{"sessionId":"s1","cwd":"/w/proj"}}`
	forkResp = `a2c {"jsonrpc":"2.0","id":5,"result":{"sessionId":"s1-fork"}}`
)

// TestASR718_ForkCopiesHistory: the fork's stream has lineage forkedFrom
// and inherits (copied, native_field); the history replayed into it is
// written with observedAt only and, where the parent has a record of the
// same entity, copiedFrom {parent, that record, native_id}; a prompt keeps
// its origin; a localThroughId declaration closes the replay; the local
// turn follows. The parent is known either because it is open on the
// connection or from the store (the session frame of the fork request).
func TestASR718_ForkCopiesHistory(t *testing.T) {
	want := []string{
		"r1 message messageId=u1 observedAt copiedFrom=s1/r1/native_id",
		"r2 message messageId=m1 observedAt copiedFrom=s1/r2/native_id",
		"r3 declaration observedAt",
		"r4 tool_call callId=c1 observedAt copiedFrom=s1/r4/native_id",
		"r5 tool_result callId=c1 observedAt copiedFrom=s1/r5/native_id",
		"r6 plan planId=p1 observedAt copiedFrom=s1/r6/native_id",
		"r7 message messageId=fork-only observedAt",
		"r8 state state=idle observedAt",
		"r9 declaration localThroughId=r8 ts(recorder)",
		"r10 state state=resumed ts(recorder)",
		"r11 message messageId=u2 ts(recorder)",
		"r12 message messageId=m2 ts(recorder)",
		"r13 state state=idle ts(recorder)",
	}
	parent := mapAll(t, startReq(""), parseFrames(t, opened(forkTurn...)))
	runs := map[string][]string{
		"parent open on the connection": append(append([]string{initReq, initResp, newReq, newResp}, forkTurn...), forkReplay(forkReq, forkResp)...),
		"parent from the store": append([]string{initReq, initResp},
			forkReplay(sessionLine("s1", 1, streamLines(parent, "s1")), forkReq, sessionLine("s1-fork", 0, nil), forkResp)...),
	}
	for name, lines := range runs {
		t.Run(name, func(t *testing.T) {
			outs := mapAll(t, startReq(""), parseFrames(t, wire(lines...)))
			rs := records(t, outs, "s1-fork")
			if got := js(rs[0]["lineage"]); got != `{"forkedFrom":{"evidence":"native_field","session":"s1"},"inherits":{"evidence":"native_field","from":"s1","mode":"copied"}}` {
				t.Errorf("lineage = %s", got)
			}
			checkSummary(t, "fork", rs, want)
			if rs[1]["origin"] != "prompt" {
				t.Errorf("the copied prompt lost its origin: %s", js(rs[1]))
			}
			if n := len(summaries(outs)); n != 0 {
				t.Errorf("diagnostics: %v", summaries(outs))
			}
			if name == "parent from the store" {
				validStreams(t, []string{"s1"}, parent)
				validStreams(t, []string{"s1-fork"}, outs)
			} else {
				validStreams(t, []string{"s1", "s1-fork"}, outs)
			}
			if name == "parent from the store" {
				if rs := records(t, outs, "s1"); len(rs) != 0 {
					t.Errorf("the parent's stream got records: %s", js(rs))
				}
				golden(t, "fork", outs)
			}
		})
	}
}

// TestASR718_ForkParentUnknown: a fork resumed on a connection that never
// named its parent: the replay is recorded, without copy markers, and a
// diagnostic says why.
func TestASR718_ForkParentUnknown(t *testing.T) {
	first := mapAll(t, startReq(""), parseFrames(t, wire(append([]string{initReq, initResp, newReq, newResp, forkReq, forkResp}, forkTurn...)...)))
	outs := mapAll(t, startReq(""), parseFrames(t, wire(forkReplay(initReq, initResp, sessionLine("s1-fork", 1, streamLines(first, "s1-fork")))...)))
	rs := records(t, outs, "s1-fork")
	for _, r := range rs {
		if r["copiedFrom"] != nil {
			t.Errorf("copiedFrom without knowing the parent: %s", js(r))
		}
	}
	if got := summaries(outs); !cmp.Equal(got, []string{"the fork's parent is not known on this connection"}) {
		t.Errorf("diagnostics = %v", got)
	}
	if d := ofType(rs, "declaration"); len(d) == 0 || d[len(d)-1]["localThroughId"] == nil {
		t.Errorf("no localThroughId declaration: %s", js(d))
	}
}

// TestASR706_SupersedesAfterRelease: an entity final for more than a turn
// is released from memory (its fingerprints kept); a later change is still
// a superseding record of its last record, with a diagnostic that the
// record holds what the later updates carry.
func TestASR706_SupersedesAfterRelease(t *testing.T) {
	lines := []string{upd(`{"sessionUpdate":"tool_call_update","toolCallId":"c1","name":"run","title":"Run","status":"completed","rawOutput":{"exit":0}}`), idle}
	for i := 0; i < 3; i++ {
		lines = append(lines, upd(`{"sessionUpdate":"agent_message","messageId":"m`+js(i)+`","content":[]}`), idle)
	}
	lines = append(lines,
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"c1","name":"run","title":"Run","status":"completed","rawOutput":{"exit":0}}`), // a repeat
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"c1","name":"run","title":"Run","status":"failed","rawOutput":{"exit":1}}`),
		idle)
	s, outs := mapConn(t, parseFrames(t, opened(lines...)), "s1")
	rs := records(t, outs, "s1")
	got := summary(rs)
	want := []string{
		"r11 tool_result callId=c1 supersedes=r3 ts(recorder)",
		"r12 state state=idle ts(recorder)",
	}
	if diff := cmp.Diff(want, got[len(got)-2:]); diff != "" {
		t.Errorf("tail (-want +got):\n%s\nall: %v", diff, got)
	}
	if got := summaries(outs); !cmp.Equal(got, []string{"update for a tool_call already final and no longer held"}) {
		t.Errorf("diagnostics = %v", got)
	}
	if len(s.ents) > 3 {
		t.Errorf("%d entities held after the session: %v", len(s.ents), s.ents)
	}
}

// TestASR706_ReleasedLastEntity: the entity released is the one named
// last (turns with no other entity in between): the update naming it
// again finds it released, as when another was named in between
// (stream.lastEnt is dropped with it).
func TestASR706_ReleasedLastEntity(t *testing.T) {
	call := `{"sessionUpdate":"tool_call_update","toolCallId":"c1","name":"run","title":"Run","status":"completed","rawOutput":{"exit":0}}`
	lines := []string{upd(call), idle, idle, idle, idle, upd(strings.Replace(call, "completed", "failed", 1)), idle}
	_, outs := mapConn(t, parseFrames(t, opened(lines...)), "s1")
	if got := summaries(outs); !cmp.Equal(got, []string{"update for a tool_call already final and no longer held"}) {
		t.Errorf("diagnostics = %v", got)
	}
	rs := records(t, outs, "s1")
	if got := summary(rs); len(got) < 2 || !strings.HasPrefix(got[len(got)-2], "r8 tool_result callId=c1 supersedes=r3") {
		t.Errorf("records: %v", got)
	}
}

// mapConn maps frames in process and returns the stream of session (for
// white-box checks) and the outputs.
func mapConn(t testing.TB, frames []sdk.Frame, session string) (*stream, []sdk.Output) {
	t.Helper()
	cfg, err := ParseConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := NewSession(testOptions(cfg), startReq("")).c
	outs, err := c.Map(t.Context(), frames)
	if err != nil {
		t.Fatal(err)
	}
	more, err := c.Finish(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	return c.streams[session], append(outs, more...)
}
