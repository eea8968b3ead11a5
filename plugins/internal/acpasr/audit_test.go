package acpasr

import (
	"strings"
	"testing"
)

// TestASR710_UnmappedUpdatesAudited: kinds this mapping does not map, and
// mapped kinds too malformed to map, become org.agent-session.acp/<kind>
// records with the update verbatim in native.record; none is dropped. The
// malformed ones do not conform to the ACP schema: a declaration of
// _org.acptap/nonconforming_frames comes before their record.
func TestASR710_UnmappedUpdatesAudited(t *testing.T) {
	tests := []struct{ name, update string }{
		{"available_commands_update", `{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"x","description":"y"}]}`},
		{"plan_removed", `{"sessionUpdate":"plan_removed","planId":"p1"}`},
		{"subagent_update naming its own session", `{"sessionUpdate":"subagent_update","sessionId":"s1","title":"helper"}`},
		{"session_message, sending side", `{"sessionUpdate":"session_message","messageId":"x","senderSessionId":"s1","recipientSessionId":"s9","content":[]}`},
		{"session_message_chunk naming no side", `{"sessionUpdate":"session_message_chunk","messageId":"x","content":{"type":"text","text":"hi"}}`},
		{"vendor kind", `{"sessionUpdate":"_acme/progress","pct":50}`},
		{"future kind", `{"sessionUpdate":"brand_new_thing","a":[1,2,{"b":null}]}`},
		{"chunk without messageId", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}`},
		{"tool update with an object id", `{"sessionUpdate":"tool_call_update","toolCallId":{},"status":"completed"}`},
		{"state without state", `{"sessionUpdate":"state_update","stopReason":"end_turn"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := records(t, mapAll(t, startReq(""), parseFrames(t, opened(upd(tt.update)))), "s1")
			malformed := strings.HasPrefix(tt.name, "chunk without") || strings.HasPrefix(tt.name, "tool update with") ||
				strings.HasPrefix(tt.name, "state without")
			if malformed && len(rs) == 3 && rs[1]["type"] == "declaration" {
				rs = append(rs[:1], rs[2])
			}
			if len(rs) != 2 {
				t.Fatalf("records = %s, want the header and one audit record", js(rs))
			}
			kind := decode(tt.update)["sessionUpdate"].(string)
			r := rs[1]
			if r["type"] != "org.agent-session.acp/"+kind {
				t.Errorf("type = %v", r["type"])
			}
			native := r["native"].(map[string]any)
			if js(native["record"]) != js(decode(tt.update)) {
				t.Errorf("native.record = %s\nwant %s", js(native["record"]), tt.update)
			}
		})
	}
}

// TestASR710_AuditKeepsBytes: the audit record keeps the update's members
// in wire order and its numbers as written.
func TestASR710_AuditKeepsBytes(t *testing.T) {
	u := `{"sessionUpdate":"_x","z":1.50,"a":12345678901234567890,"m":"<&>"}`
	outs := mapAll(t, startReq(""), parseFrames(t, opened(upd(u))))
	last := outs[len(outs)-1].JSON
	if !strings.Contains(string(last), `"record":`+u) {
		t.Errorf("record line %s does not hold %s verbatim", last, u)
	}
}
