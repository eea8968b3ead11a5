package aep

import (
	"testing"

	mt "github.com/acptap/acptap/sdk/mappertest"
)

// TestAlpha13_ArchiveEndsOpenSession: under the alpha.13 draft a
// session/archive of a session open on the connection ends it as
// session/close does (pending attention dismissed, one session.ended);
// archiving a session not open here, and any archive under alpha.9, is an
// x.acp.* event only. The draft's other requests are x.acp.* events.
func TestAlpha13_ArchiveEndsOpenSession(t *testing.T) {
	lines := v2Session(
		mt.C2A(`{"jsonrpc":"2.0","id":2,"method":"session/set_title","params":{"sessionId":"s1","title":"T"}}`),
		mt.A2C(`{"jsonrpc":"2.0","id":2,"result":{"title":"T"}}`),
		mt.C2A(`{"jsonrpc":"2.0","id":3,"method":"tool_call/cancel","params":{"sessionId":"s1","toolCallId":"c1"}}`),
		mt.A2C(`{"jsonrpc":"2.0","id":3,"result":{}}`),
		mt.C2A(`{"jsonrpc":"2.0","id":4,"method":"session/archive","params":{"sessionId":"other"}}`),
		mt.A2C(`{"jsonrpc":"2.0","id":4,"result":{}}`),
		mt.C2A(`{"jsonrpc":"2.0","id":5,"method":"session/archive","params":{"sessionId":"s1"}}`),
		mt.A2C(`{"jsonrpc":"2.0","id":5,"result":{}}`),
	)
	evs := mapAll(t, defaultCfg(), InputAlpha13, wire(nil, lines...))
	checkValid(t, evs)
	want := "session.started x.acp.session.set.title x.acp.tool.call.cancel x.acp.session.archive x.acp.session.archive session.ended"
	if got := types(evs); got != want {
		t.Errorf("alpha.13 events:\n got %s\nwant %s", got, want)
	}
	if ended := ofType(evs, "session.ended"); len(ended) != 1 || ended[0].Sess != "s1" {
		t.Errorf("session.ended = %+v", ended)
	}
	old := mapAll(t, defaultCfg(), v2, wire(nil, lines...))
	if len(ofType(old, "session.ended")) != 0 {
		t.Error("alpha.9: an archive ended the session")
	}
}
