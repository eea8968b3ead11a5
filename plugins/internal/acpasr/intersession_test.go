package acpasr

import (
	"testing"

	"github.com/acptap/acptap/sdk"
	"github.com/google/go-cmp/cmp"
)

// TestASR721_Subagent: a subagent_update writes a subagent record in the
// parent's stream at once (childSession; callId when a toolCallId links
// it), before the child's traffic; the child's stream carries
// lineage.spawnedBy {parent, native_field}; a later update of the
// association that changes nothing writes nothing; a session no
// subagent_update names gets no parent.
func TestASR721_Subagent(t *testing.T) {
	outs := mapAll(t, startReq(""), parseFrames(t, opened(
		upd(`{"sessionUpdate":"subagent_update","sessionId":"kid","title":"Tests","state":{"state":"running"},"toolCallId":"c9"}`),
		updIn("kid", `{"sessionUpdate":"agent_message","messageId":"k1","content":[{"type":"text","text":"running"}]}`),
		updIn("kid", `{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}`),
		upd(`{"sessionUpdate":"subagent_update","sessionId":"kid","state":{"state":"idle"}}`),
		upd(`{"sessionUpdate":"subagent_update","sessionId":"kid2","_meta":{"k":1}}`),
		updIn("stranger", `{"sessionUpdate":"state_update","state":"running"}`),
		idle,
	)))
	golden(t, "subagent", outs)
	parentRecs := ofType(records(t, outs, "s1"), "subagent")
	var got []string
	for _, r := range parentRecs {
		got = append(got, js(strip(r)))
	}
	want := []string{
		`{"callId":"c9","childSession":"kid","type":"subagent"}`,
		`{"_meta":{"k":1},"childSession":"kid2","type":"subagent"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("subagent records (-want +got):\n%s", diff)
	}
	// Order: the parent's subagent record comes before the child's header.
	sub, kidHeader := -1, -1
	for i, o := range outs {
		switch {
		case o.Kind == sdk.ASRRecord && o.Session == "s1" && sub < 0 && string(o.JSON[:20]) == `{"type":"subagent","`:
			sub = i
		case o.Kind == sdk.ASRHeader && o.Session == "kid":
			kidHeader = i
		}
	}
	if sub < 0 || kidHeader < 0 || sub > kidHeader {
		t.Errorf("subagent record at output %d, child header at %d", sub, kidHeader)
	}
	if got := js(records(t, outs, "kid")[0]["lineage"]); got != `{"spawnedBy":{"evidence":"native_field","session":"s1"}}` {
		t.Errorf("child lineage = %s", got)
	}
	if l := records(t, outs, "stranger")[0]["lineage"]; l != nil {
		t.Errorf("a parent was guessed: %s", js(l))
	}
	if got := summaries(outs); !cmp.Equal(got, []string{"session not opened on this connection"}) {
		t.Errorf("diagnostics = %v (only the stranger is unexpected)", got)
	}
	validStreams(t, []string{"s1", "kid", "stranger"}, outs)
}

// TestASR721_ChildBeforeAssociation: child traffic before the association
// keeps its header without spawnedBy; a diagnostic says so.
func TestASR721_ChildBeforeAssociation(t *testing.T) {
	outs := mapAll(t, startReq(""), parseFrames(t, opened(
		updIn("kid", `{"sessionUpdate":"state_update","state":"running"}`),
		upd(`{"sessionUpdate":"subagent_update","sessionId":"kid"}`),
	)))
	if l := records(t, outs, "kid")[0]["lineage"]; l != nil {
		t.Errorf("lineage = %s", js(l))
	}
	if got := summaries(outs); !cmp.Equal(got, []string{"session not opened on this connection", "child traffic recorded before its subagent association"}) {
		t.Errorf("diagnostics = %v", got)
	}
}

// TestASR735_SessionMessage: in the receiving session, a message with role
// user, author agent, origin inter_session, from the sender, to this
// session, with ACP's messageId; chunks fold into it (decision 7), and a
// whole update replaces them. In the sending session the update is an
// audit record, chunks after it too. No session and no message id is
// invented: without a sender the message has no from, and the sender's
// stream is not created.
func TestASR735_SessionMessage(t *testing.T) {
	outs := mapAll(t, startReq(""), parseFrames(t, opened(
		upd(`{"sessionUpdate":"session_message_chunk","messageId":"in-1","senderSessionId":"kid","recipientSessionId":"s1","content":{"type":"text","text":"Tests "}}`),
		upd(`{"sessionUpdate":"session_message_chunk","messageId":"in-1","content":{"type":"text","text":"passed."}}`),
		upd(`{"sessionUpdate":"session_message","messageId":"in-2","senderSessionId":"kid","content":[{"type":"text","text":"one"}],"_meta":{"x":1}}`),
		upd(`{"sessionUpdate":"session_message","messageId":"in-2","senderSessionId":null,"content":[{"type":"text","text":"two"}]}`),
		upd(`{"sessionUpdate":"session_message","messageId":"in-3","recipientSessionId":"s1","content":[{"type":"text","text":"anonymous"}]}`),
		upd(`{"sessionUpdate":"session_message","messageId":"out-1","senderSessionId":"s1","recipientSessionId":"kid","content":[{"type":"text","text":"run the tests"}]}`),
		upd(`{"sessionUpdate":"session_message_chunk","messageId":"out-1","content":{"type":"text","text":" please"}}`),
		idle,
	)))
	golden(t, "session_message", outs)
	rs := records(t, outs, "s1")
	var got []string
	for _, r := range rs[1:] {
		got = append(got, js(strip(r)))
	}
	want := []string{
		`{"type":"org.agent-session.acp/session_message"}`,
		`{"type":"org.agent-session.acp/session_message_chunk"}`,
		`{"assembly":"chunks","author":"agent","content":[{"text":"Tests passed.","type":"text"}],"from":{"session":"kid"},"messageId":"in-1","origin":"inter_session","recipients":[{"actor":{"session":"s1"}}],"role":"user","type":"message"}`,
		`{"_meta":{"x":1},"assembly":"folded","author":"agent","content":[{"text":"two","type":"text"}],"from":{"session":"kid"},"messageId":"in-2","origin":"inter_session","recipients":[{"actor":{"session":"s1"}}],"role":"user","type":"message"}`,
		`{"assembly":"folded","author":"agent","content":[{"text":"anonymous","type":"text"}],"messageId":"in-3","origin":"inter_session","recipients":[{"actor":{"session":"s1"}}],"role":"user","type":"message"}`,
		`{"state":"idle","stopReason":"end_turn","type":"state"}`,
	}
	// Audit records (written as they come; messages at the turn's end) are
	// compared by type: their native.record is the update.
	for i := range got {
		if r := rs[i+1]; r["native"].(map[string]any)["record"] != nil {
			got[i] = js(map[string]any{"type": r["type"]})
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if rs := records(t, outs, "kid"); len(rs) != 0 {
		t.Errorf("the sender's stream was invented: %s", js(rs))
	}
	validStreams(t, []string{"s1"}, outs)
}
