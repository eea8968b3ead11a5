package aep

import (
	"strings"
	"testing"

	"github.com/acptap/acptap/sdk"
	mt "github.com/acptap/acptap/sdk/mappertest"
)

// v1Session wraps lines in session/new … and returns the frames.
func v1Session(lines ...mt.Line) []mt.Line {
	head := []mt.Line{
		mt.C2A(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`),
		mt.A2C(`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}`),
	}
	return append(head, lines...)
}

const promptReq = `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"go"}]}}`

func upd(u string) mt.Line {
	return mt.A2C(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":` + u + `}}`)
}

// TestAnnexA13_StopReasonPicksTheTerminal: the prompt response's
// stopReason closes the run; a JSON-RPC error fails it.
func TestAnnexA13_StopReasonPicksTheTerminal(t *testing.T) {
	for resp, want := range map[string]string{
		`{"stopReason":"end_turn"}`:          `run.finished {"stop_reason":"end_turn"}`,
		`{"stopReason":"max_tokens"}`:        `run.finished {"stop_reason":"max_tokens"}`,
		`{"stopReason":"max_turn_requests"}`: `run.finished {"stop_reason":"max_turn_requests"}`,
		`{"stopReason":"cancelled"}`:         `run.cancelled {"by":"user"}`,
		`{"stopReason":"refusal"}`:           `run.failed {"reason":"refusal"}`,
		`ERROR`:                              `run.failed {"error":{"type":"jsonrpc_-32603"},"reason":"error"}`,
	} {
		line := `{"jsonrpc":"2.0","id":2,"result":` + resp + `}`
		if resp == "ERROR" {
			line = `{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"boom"}}`
		}
		evs := mapAll(t, defaultCfg(), "acp/1", wire(nil, v1Session(mt.C2A(promptReq), mt.A2C(line))...))
		checkValid(t, evs)
		term := evs[len(evs)-1]
		delete(term.Data, "duration_ms")
		if got := term.Type + " " + canonJSON(t, term.Data); got != want {
			t.Errorf("%s: got %s, want %s", resp, got, want)
		}
		start := ofType(evs, "run.started")[0]
		if term.Run != "0-2" || start.Run != "0-2" || term.Caus != start.ID {
			t.Errorf("%s: run %q/%q, cause %q (want %s)", resp, start.Run, term.Run, term.Caus, start.ID)
		}
	}
}

// TestRunCarriesEveryEventOfTheTurn: events inside the turn carry the run,
// events outside do not; a second response for the run adds nothing.
func TestRunCarriesEveryEventOfTheTurn(t *testing.T) {
	evs := mapAll(t, defaultCfg(), "acp/1", wire(nil, v1Session(
		mt.C2A(promptReq),
		upd(`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"ls","kind":"read","status":"pending"}`),
		mt.A2C(`{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`),
		upd(`{"sessionUpdate":"current_mode_update","currentModeId":"x"}`),
	)...))
	for _, e := range evs {
		inside := e.Type == "run.started" || e.Type == "tool.requested" || e.Type == "run.finished"
		if inside != (e.Run == "0-2") {
			t.Errorf("%s run %q", e.Type, e.Run)
		}
	}
}

// TestAnnexA13_PermissionObservedReadOnly: the request claims no options
// and no respond_via; answered and resolved point at it (subject) and at
// their predecessor (cause); a cancelled outcome is dismissed.
func TestAnnexA13_PermissionObservedReadOnly(t *testing.T) {
	req := mt.A2C(`{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"tc9","title":"sudo make install"},"options":[{"optionId":"a","name":"A","kind":"allow_once"},{"optionId":"r","name":"R","kind":"reject_once"}]}}`)
	evs := mapAll(t, defaultCfg(), "acp/1", wire(nil, v1Session(req,
		mt.C2A(`{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"a"}}}`))...))
	checkValid(t, evs)
	rq, an, rs := ofType(evs, "attention.requested"), ofType(evs, "attention.answered"), ofType(evs, "attention.resolved")
	if len(rq) != 1 || len(an) != 1 || len(rs) != 1 {
		t.Fatalf("events: %s", types(evs))
	}
	if _, ok := rq[0].Data["options"]; ok || rq[0].Data["respond_via"] != nil || rq[0].Sev != "notice" || rq[0].Cap != "redacted" || rq[0].Subj != "tc9" {
		t.Errorf("request: %s", rq[0].raw)
	}
	if an[0].Subj != rq[0].ID || an[0].Caus != rq[0].ID || rs[0].Subj != rq[0].ID || rs[0].Caus != an[0].ID || rs[0].Data["resolution"] != "answered" {
		t.Errorf("pairing:\n%s\n%s", an[0].raw, rs[0].raw)
	}
	evs = mapAll(t, defaultCfg(), "acp/1", wire(nil, v1Session(req,
		mt.C2A(`{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"cancelled"}}}`))...))
	if rs := ofType(evs, "attention.resolved"); len(rs) != 1 || rs[0].Data["resolution"] != "dismissed" || len(ofType(evs, "attention.answered")) != 0 {
		t.Errorf("cancelled outcome: %s", types(evs))
	}
}

// TestLifecycle_SessionEndedAfterDismissingPendingAttention: at most one
// session.ended, and pending requests are resolved (dismissed) before it.
func TestLifecycle_SessionEndedAfterDismissingPendingAttention(t *testing.T) {
	evs := mapAll(t, defaultCfg(), "acp/1", wire(nil, v1Session(
		mt.A2C(`{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"t"},"options":[]}}`),
		mt.C2A(`{"jsonrpc":"2.0","id":5,"method":"session/close","params":{"sessionId":"s1"}}`),
		mt.A2C(`{"jsonrpc":"2.0","id":5,"result":{}}`),
		mt.C2A(`{"jsonrpc":"2.0","id":6,"method":"session/close","params":{"sessionId":"s1"}}`),
		mt.A2C(`{"jsonrpc":"2.0","id":6,"result":{}}`),
	)...))
	checkValid(t, evs)
	if got := types(evs); got != "session.started attention.requested attention.resolved session.ended" {
		t.Fatalf("types: %s", got)
	}
}

// TestLifecycle_FinishClosesWhatTheConnectionLeftOpen: when the connection
// ends, pending attention is dismissed and open runs are cancelled by
// shutdown (the agent process that could finish them is gone).
func TestLifecycle_FinishClosesWhatTheConnectionLeftOpen(t *testing.T) {
	evs := mapAll(t, defaultCfg(), "acp/1", wire(nil, v1Session(mt.C2A(promptReq),
		mt.A2C(`{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"t"},"options":[]}}`),
	)...))
	checkValid(t, evs)
	if got := types(evs); !strings.HasSuffix(got, "attention.requested attention.resolved run.cancelled") {
		t.Fatalf("types: %s", got)
	}
	if c := ofType(evs, "run.cancelled")[0]; c.Data["by"] != "shutdown" || c.Run != "0-2" {
		t.Errorf("cancel: %s", c.raw)
	}
}

// TestLifecycle_SessionEndsOnceAcrossEpochs: when the store's stream says
// an earlier connection ended the session, closing it again on a later
// connection adds no second session.ended (terminal exclusivity holds
// across all epochs).
func TestLifecycle_SessionEndsOnceAcrossEpochs(t *testing.T) {
	frames := wire(map[string]int{"s1": 1}, v1Session(
		mt.C2A(`{"jsonrpc":"2.0","id":5,"method":"session/close","params":{"sessionId":"s1"}}`),
		mt.A2C(`{"jsonrpc":"2.0","id":5,"result":{}}`))...)
	for i := range frames {
		if frames[i].Kind == sdk.KindSession {
			frames[i].Session.Prior = [][]byte{[]byte(`{"type":"header"}`), []byte(`{"type":"state","seq":1,"state":"ended"}`)}
		}
	}
	evs := mapAll(t, defaultCfg(), "acp/1", frames)
	if got := types(evs); got != "session.started" {
		t.Fatalf("types: %s", got)
	}
}
