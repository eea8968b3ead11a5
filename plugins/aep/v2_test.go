package aep

import (
	"strings"
	"testing"

	mt "github.com/acptap/acptap/sdk/mappertest"
)

const v2 = "acp/2@2.0.0-alpha.9"

func v2Session(lines ...mt.Line) []mt.Line {
	head := []mt.Line{
		mt.C2A(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w"}}`),
		mt.A2C(`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}`),
	}
	return append(head, lines...)
}

func state(s string) mt.Line { return upd(`{"sessionUpdate":"state_update",` + s + `}`) }

// TestV2_StateUpdatesBoundTheRun: idle → running starts the run of the
// unbound prompt (trigger user, its rpc id); running ↔ requires_action and
// repeated states are nothing; idle ends it by stopReason; work with no
// prompt is an agent run <epoch>-a<n>.
func TestV2_StateUpdatesBoundTheRun(t *testing.T) {
	evs := mapAll(t, defaultCfg(), v2, wire(nil, v2Session(
		mt.C2A(promptReq),
		mt.A2C(`{"jsonrpc":"2.0","id":2,"result":{"messageId":"u1"}}`),
		state(`"state":"running"`), state(`"state":"requires_action"`), state(`"state":"running"`), state(`"state":"running"`),
		state(`"state":"idle","stopReason":"end_turn","usage":{"totalTokens":3,"inputTokens":2,"outputTokens":1}`),
		state(`"state":"idle"`),
		state(`"state":"running"`),
		state(`"state":"idle","stopReason":"error","error":{"code":-32000,"message":"token=abc123secret failed"}`),
	)...))
	checkValid(t, evs)
	if got := types(evs); got != "session.started run.started run.finished run.started run.failed" {
		t.Fatalf("types: %s", got)
	}
	user, fin, agent, failed := evs[1], evs[2], evs[3], evs[4]
	if user.Run != "0-2" || user.Data["trigger"] != "user" || user.Data["message_digest"] == nil {
		t.Errorf("user run: %s", user.raw)
	}
	if fin.Run != "0-2" || fin.Data["stop_reason"] != "end_turn" || fin.Data["gen_ai.usage.input_tokens"] != float64(2) || fin.Caus != user.ID {
		t.Errorf("finish: %s", fin.raw)
	}
	if agent.Run != "0-a1" || agent.Data["trigger"] != "agent" {
		t.Errorf("agent run: %s", agent.raw)
	}
	if failed.Run != "0-a1" || canonJSON(t, failed.Data["error"]) != `{"type":"jsonrpc_-32000"}` || failed.Data["reason"] != "error" {
		t.Errorf("failed: %s", failed.raw)
	}
}

// TestV2_StopReasons: the [PROPOSAL] table for idle stop reasons.
func TestV2_StopReasons(t *testing.T) {
	for stop, want := range map[string]string{
		`"stopReason":"max_tokens"`: `run.finished {"stop_reason":"max_tokens"}`,
		`"stopReason":"cancelled"`:  `run.cancelled {"by":"user"}`,
		`"stopReason":"refusal"`:    `run.failed {"reason":"refusal"}`,
		`"stopReason":"_vendor"`:    `run.finished {"stop_reason":"_vendor"}`,
		`"stopReason":null`:         `run.finished {}`,
	} {
		evs := mapAll(t, defaultCfg(), v2, wire(nil, v2Session(state(`"state":"running"`), state(`"state":"idle",`+stop))...))
		term := evs[len(evs)-1]
		delete(term.Data, "duration_ms")
		if got := term.Type + " " + canonJSON(t, term.Data); got != want {
			t.Errorf("%s: got %s, want %s", stop, got, want)
		}
	}
}

// TestV2_PromptErrorNeverStartsARun: a prompt refused before insertion
// stays out of the next run.
func TestV2_PromptErrorNeverStartsARun(t *testing.T) {
	evs := mapAll(t, defaultCfg(), v2, wire(nil, v2Session(mt.C2A(promptReq),
		mt.A2C(`{"jsonrpc":"2.0","id":2,"error":{"code":-32800,"message":"cancelled"}}`),
		state(`"state":"running"`))...))
	if r := ofType(evs, "run.started"); len(r) != 1 || r[0].Run != "0-a1" {
		t.Fatalf("run.started: %+v", r)
	}
}

// TestV2_ToolCallUpdateFirstSightIsRequested: tool_call_update is an
// upsert; its first sight is tool.requested (name before title), followed
// at once by the terminal when already final; cancelled is tool.failed;
// one terminal per tool.
func TestV2_ToolCallUpdateFirstSightIsRequested(t *testing.T) {
	evs := mapAll(t, defaultCfg(), v2, wire(nil, v2Session(
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"a","name":"read_file","title":"Read x","kind":"read","status":"completed","rawOutput":{"ok":true}}`),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"b","title":"Run","status":"in_progress"}`),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"b","status":"cancelled"}`),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"b","status":"completed"}`),
	)...))
	checkValid(t, evs)
	want := "session.started tool.requested tool.completed tool.requested tool.failed x.acp.tool_call.update"
	if got := types(evs); got != want {
		t.Fatalf("types: %s\nwant:  %s", got, want)
	}
	if evs[1].Data["tool"].(map[string]any)["name"] != "read_file" || evs[2].Caus != evs[1].ID || evs[2].Data["result_digest"] == nil {
		t.Errorf("tool a: %s %s", evs[1].raw, evs[2].raw)
	}
	if canonJSON(t, evs[4].Data["error"]) != `{"type":"cancelled"}` || evs[4].Sev != "error" {
		t.Errorf("cancelled: %s", evs[4].raw)
	}
}

// TestV2_UsageIsContextOccupancyNeverGenAI: usage_update {used, size,
// cost} is x.acp.usage.updated with context_* counts; gen_ai.usage.* would
// be summed downstream as per-request usage.
func TestV2_UsageIsContextOccupancyNeverGenAI(t *testing.T) {
	evs := mapAll(t, defaultCfg(), v2, wire(nil, v2Session(
		upd(`{"sessionUpdate":"usage_update","used":1200,"size":200000,"cost":{"amount":0.5,"currency":"EUR"}}`))...))
	u := ofType(evs, "x.acp.usage.updated")
	if len(u) != 1 || strings.Contains(string(u[0].raw), "gen_ai") ||
		canonJSON(t, u[0].Data) != `{"context_used_tokens":1200,"context_window_tokens":200000,"cost":{"currency":"EUR","total":0.5}}` {
		t.Fatalf("usage: %+v", u)
	}
}

// TestV2_ResumeReplayIsNotNewActivity: what the agent replays before
// answering session/resume (history, the state snapshot) maps to nothing;
// the response is session.started, and later work is new.
func TestV2_ResumeReplayIsNotNewActivity(t *testing.T) {
	evs := mapAll(t, defaultCfg(), v2, wire(map[string]int{"s1": 1},
		mt.C2A(`{"jsonrpc":"2.0","id":1,"method":"session/resume","params":{"sessionId":"s1","cwd":"/w","replayFrom":{"type":"start"}}}`),
		state(`"state":"running"`),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"old","title":"x","status":"completed"}`),
		state(`"state":"idle","stopReason":"end_turn"`),
		mt.A2C(`{"jsonrpc":"2.0","id":1,"result":{}}`),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"old","status":"completed"}`),
		state(`"state":"running"`),
	))
	checkValid(t, evs)
	if got := types(evs); got != "session.started x.acp.tool_call.update run.started run.cancelled" {
		t.Fatalf("types: %s", got)
	}
	if evs[0].Ep != 1 || evs[2].Run != "1-a1" {
		t.Errorf("epoch/run: %s %s", evs[0].raw, evs[2].raw)
	}
}
