package aep

import (
	"regexp"
	"testing"
	"time"

	"github.com/acptap/acptap/sdk"
	mt "github.com/acptap/acptap/sdk/mappertest"
)

var ulidRe = regexp.MustCompile(`^[0-9A-HJKMNP-TV-Z]{26}$`)

// v1Turn is a short v1 session: new, one prompt turn, close.
func v1Turn(prompt string) []mt.Line {
	return []mt.Line{
		mt.C2A(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`),
		mt.A2C(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`),
		mt.C2A(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/home/tester/proj","mcpServers":[]}}`),
		mt.A2C(`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}`),
		mt.C2A(prompt),
		mt.A2C(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`),
		mt.A2C(`{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`),
		mt.C2A(`{"jsonrpc":"2.0","id":3,"method":"session/close","params":{"sessionId":"s1"}}`),
		mt.A2C(`{"jsonrpc":"2.0","id":3,"result":{}}`),
	}
}

const prompt2 = `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"fix /home/tester/x with token=abc123secret"}]}}`

// TestAEP0001_EnvelopeAttributes: required attributes, the recommended
// source form, ULID ids, time from the frame, seq dense from 0 per
// session, epoch present.
func TestAEP0001_EnvelopeAttributes(t *testing.T) {
	evs := mapAll(t, defaultCfg(), "acp/1", wire(nil, v1Turn(prompt2)...))
	checkValid(t, evs)
	if got := types(evs); got != "session.started run.started run.finished session.ended" {
		t.Fatalf("types: %s", got)
	}
	for i, e := range evs {
		if e.Src != "aep://host/agent/acp/session/s1" || e.Sess != "s1" || e.Seq != int64(i) || e.Ep != 0 || !ulidRe.MatchString(e.ID) {
			t.Errorf("event %d envelope: %s", i, e.raw)
		}
		if _, err := time.Parse(time.RFC3339Nano, e.Time); err != nil {
			t.Errorf("event %d time %q", i, e.Time)
		}
	}
	// run.started comes from the 5th line: base + 40ms.
	if evs[1].Time != "2026-10-26T14:30:41.247Z" {
		t.Errorf("run.started time %s, want the prompt frame's receipt time", evs[1].Time)
	}
}

// TestEpochIsTheSessionsConnectionCount: the host's session frame says how
// many connections observed the session before; that is the epoch, and
// run ids are qualified by it.
func TestEpochIsTheSessionsConnectionCount(t *testing.T) {
	evs := mapAll(t, defaultCfg(), "acp/1", wire(map[string]int{"s1": 2}, v1Turn(prompt2)...))
	for _, e := range evs {
		if e.Ep != 2 {
			t.Errorf("epoch %d: %s", e.Ep, e.raw)
		}
	}
	if r := ofType(evs, "run.started"); len(r) != 1 || r[0].Run != "2-2" || r[0].Seq != 1 {
		t.Fatalf("run.started: %+v", r)
	}
}

// TestSeqCountsPerSession: two sessions interleaved on one connection each
// count from 0.
func TestSeqCountsPerSession(t *testing.T) {
	lines := []mt.Line{
		mt.C2A(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`),
		mt.A2C(`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"a"}}`),
		mt.C2A(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`),
		mt.A2C(`{"jsonrpc":"2.0","id":2,"result":{"sessionId":"b"}}`),
		mt.C2A(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"a","prompt":[]}}`),
		mt.C2A(`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"b","prompt":[]}}`),
		mt.A2C(`{"jsonrpc":"2.0","id":4,"result":{"stopReason":"end_turn"}}`),
		mt.A2C(`{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`),
	}
	next := map[string]int64{}
	for _, e := range mapAll(t, defaultCfg(), "acp/1", wire(nil, lines...)) {
		if e.Seq != next[e.Sess] {
			t.Errorf("session %s: seq %d, want %d", e.Sess, e.Seq, next[e.Sess])
		}
		next[e.Sess]++
	}
	if next["a"] != 3 || next["b"] != 3 {
		t.Fatalf("counts %v", next)
	}
}

// TestEventIDsAreDerivedFromFrameAndConnection: rerunning the frames gives
// the same ids (rebuild, restart); another connection gives other ids.
func TestEventIDsAreDerivedFromFrameAndConnection(t *testing.T) {
	frames := wire(nil, v1Turn(prompt2)...)
	run := func(conn string) []ev {
		outs := mt.Run(t, New(), sdk.StartRequest{Config: []byte(`{"host":"h"}`), Connection: conn, Input: "acp/1"}, frames, 1)
		return events(t, outs)
	}
	a, b, c := run("c-1"), run("c-1"), run("c-2")
	seen := map[string]bool{}
	for i := range a {
		if a[i].ID != b[i].ID {
			t.Errorf("event %d: id %s then %s", i, a[i].ID, b[i].ID)
		}
		if a[i].ID == c[i].ID {
			t.Errorf("event %d: the same id on two connections", i)
		}
		if seen[a[i].ID] {
			t.Errorf("id %s minted twice", a[i].ID)
		}
		seen[a[i].ID] = true
	}
}

// TestTraceparentLiftedFromMeta: a valid W3C traceparent in the ACP _meta
// rides the envelope; an invalid one is left out.
func TestTraceparentLiftedFromMeta(t *testing.T) {
	tp := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	good := `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[],"_meta":{"traceparent":"` + tp + `"}}}`
	bad := `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[],"_meta":{"traceparent":"nope"}}}`
	if r := ofType(mapAll(t, defaultCfg(), "acp/1", wire(nil, v1Turn(good)...)), "run.started"); r[0].TP != tp {
		t.Errorf("traceparent %q", r[0].TP)
	}
	if r := ofType(mapAll(t, defaultCfg(), "acp/1", wire(nil, v1Turn(bad)...)), "run.started"); r[0].TP != "" {
		t.Errorf("invalid traceparent kept: %q", r[0].TP)
	}
}
