package acpasr

import (
	"slices"
	"strings"
	"testing"

	"github.com/acptap/acptap/sdk"
)

// TestSchemaCheck_NonconformingFrames: a frame that breaks the ACP schema
// is still mapped as far as it can be; it also gets a warning naming the
// offending value, and its session declares
// _org.acptap/nonconforming_frames once, before the first such record.
func TestSchemaCheck_NonconformingFrames(t *testing.T) {
	bad1 := upd(`{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":5}`)
	bad2 := upd(`{"sessionUpdate":"tool_call_update","status":"completed"}`)
	good := upd(`{"sessionUpdate":"agent_message_chunk","messageId":"m2","content":{"type":"text","text":"ok"}}`)
	frames := parseFrames(t, opened(bad1, good, bad2))
	outs := mapAll(t, startReq(""), frames)

	var ds []sdk.Output
	for _, d := range diags(outs) {
		if d.Summary == summaryNonconforming {
			ds = append(ds, d)
		}
	}
	if len(ds) != 2 {
		t.Fatalf("schema diagnostics = %v, want 2 (one per bad frame)", summaries(outs))
	}
	for i, want := range []struct {
		seq    uint64
		detail string
	}{{frames[4].Seq, "at /update/content: got number, want object"}, {frames[6].Seq, "missing property 'toolCallId'"}} {
		d := ds[i]
		if d.Severity != sdk.SeverityWarning || d.Session != "s1" || !slices.Equal(d.FrameSeqs, []uint64{want.seq}) {
			t.Errorf("diagnostic %d = %+v, want a warning for s1 on frame %d", i, d, want.seq)
		}
		if !strings.Contains(d.Detail, want.detail) {
			t.Errorf("diagnostic %d detail = %q, want it to contain %q", i, d.Detail, want.detail)
		}
	}

	rs := records(t, outs, "s1")
	decls := ofType(rs, "declaration")
	if len(decls) != 1 || js(decls[0]["lossy"]) != `["_org.acptap/nonconforming_frames"]` {
		t.Fatalf("declarations = %s, want one of _org.acptap/nonconforming_frames", js(decls))
	}
	if got := types(rs); len(got) < 3 || got[1] != "declaration" {
		t.Errorf("record types = %v, want the declaration right after the header", got)
	}
	ref := decls[0]["native"].(map[string]any)["ref"].(map[string]any)
	if js(ref["frames"]) != js([]uint64{frames[4].Seq}) {
		t.Errorf("declaration frames = %s, want the first bad frame", js(ref["frames"]))
	}
	// Still mapped: the bad chunk and the bad tool update are recorded
	// (audit-only, verbatim), the good chunk as a message.
	var audited []string
	for _, r := range rs {
		if typ := r["type"].(string); strings.HasPrefix(typ, "org.agent-session.acp/") {
			audited = append(audited, typ)
		}
	}
	if !slices.Equal(audited, []string{"org.agent-session.acp/agent_message_chunk", "org.agent-session.acp/tool_call_update"}) {
		t.Errorf("audit records = %v, want the two bad frames", audited)
	}
	if len(ofType(rs, "message")) != 1 {
		t.Errorf("messages = %s, want the good chunk's", js(ofType(rs, "message")))
	}
}

// TestSchemaCheck_BeforeTheStream: a bad frame of a session the connection
// has not opened yet declares in the stream the frame opens, after its
// records; a bad frame naming no session is only a diagnostic.
func TestSchemaCheck_BeforeTheStream(t *testing.T) {
	outs := mapAll(t, startReq(""), parseFrames(t, wire(initReq, initResp,
		`c2a {"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":7}}`,
		`a2c {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s9","update":{"sessionUpdate":"state_update","state":7}}}`)))
	if n := strings.Count(strings.Join(summaries(outs), "\n"), summaryNonconforming); n != 2 {
		t.Fatalf("diagnostics = %q, want 2 schema warnings", summaries(outs))
	}
	rs := records(t, outs, "s9")
	got := types(rs)
	if len(got) < 2 || got[0] != "header" || got[len(got)-1] != "declaration" {
		t.Errorf("s9 record types = %v, want the header, the frame's records, then the declaration", got)
	}
	for _, o := range outs {
		if o.Kind != sdk.Diagnostic && o.Session != "s9" {
			t.Errorf("output for session %q: %s", o.Session, o.JSON)
		}
	}
}

// TestSchemaCheck_Batch: the elements of a batch are frames of their own
// (sharing a seq): only the sessions of those that do not conform declare.
func TestSchemaCheck_Batch(t *testing.T) {
	outs := mapAll(t, startReq(""), parseFrames(t, wire(initReq, initResp, newReq, newResp,
		`c2a {"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w/two"}}`,
		`a2c {"jsonrpc":"2.0","id":2,"result":{"sessionId":"s2"}}`,
		`a2c [{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"state_update","state":"running"}}},`+
			`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s2","update":{"sessionUpdate":"state_update","state":7}}}]`)))
	if d := ofType(records(t, outs, "s1"), "declaration"); len(d) != 0 {
		t.Errorf("s1 declarations = %s, want none", js(d))
	}
	if d := ofType(records(t, outs, "s2"), "declaration"); len(d) != 1 {
		t.Errorf("s2 declarations = %s, want one", js(d))
	}
	var ds []sdk.Output
	for _, d := range diags(outs) {
		if d.Summary == summaryNonconforming {
			ds = append(ds, d)
		}
	}
	if len(ds) != 1 || ds[0].Session != "s2" || !strings.Contains(ds[0].Detail, "/update/state") {
		t.Errorf("schema diagnostics = %+v, want one for s2 at /update/state", ds)
	}
}

// TestSchemaCheck_Off: "checkSchema": false maps the same frames without
// the check.
func TestSchemaCheck_Off(t *testing.T) {
	frames := parseFrames(t, opened(upd(`{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":5}`)))
	outs := mapAll(t, startReq(`{"checkSchema": false}`), frames)
	if slices.Contains(summaries(outs), summaryNonconforming) {
		t.Errorf("diagnostics = %q with the check off", summaries(outs))
	}
	if d := ofType(records(t, outs, "s1"), "declaration"); len(d) != 0 {
		t.Errorf("declarations = %s with the check off", js(d))
	}
	on := mapAll(t, startReq(`{"checkSchema": true}`), frames)
	if !slices.Contains(summaries(on), summaryNonconforming) {
		t.Errorf("diagnostics = %q with the check on", summaries(on))
	}
}

// TestSchemaCheck_ConformingFixtures: the golden fixtures conform, so the
// check adds nothing to them.
func TestSchemaCheck_ConformingFixtures(t *testing.T) {
	for _, name := range []string{"full", "turn"} {
		outs := mapAll(t, startReq(""), loadFrames(t, name))
		for _, d := range diags(outs) {
			if d.Summary == summaryNonconforming {
				t.Errorf("%s: frame %v: %s", name, d.FrameSeqs, d.Detail)
			}
		}
	}
}
