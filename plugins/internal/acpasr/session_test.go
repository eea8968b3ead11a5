package acpasr

import (
	"strings"
	"testing"

	"github.com/acptap/acptap/sdk"
	"github.com/google/go-cmp/cmp"
)

// TestStateUpdates: state, stopReason (vendor values unchanged, ASR-709)
// and error are copied; session/close writes state ended; a malformed
// stopReason is treated as absent.
func TestStateUpdates(t *testing.T) {
	rs := records(t, mapAll(t, startReq(""), parseFrames(t, opened(
		upd(`{"sessionUpdate":"state_update","state":"running"}`),
		upd(`{"sessionUpdate":"state_update","state":"idle","stopReason":"error","error":{"code":-32603,"message":"boom"}}`),
		upd(`{"sessionUpdate":"state_update","state":"idle","stopReason":"_acme_budget"}`),
		upd(`{"sessionUpdate":"state_update","state":"unknown"}`),
		upd(`{"sessionUpdate":"state_update","state":"idle","stopReason":42}`),
		`c2a {"jsonrpc":"2.0","id":5,"method":"session/close","params":{"sessionId":"s1"}}`,
		`a2c {"jsonrpc":"2.0","id":5,"result":{}}`,
	))), "s1")
	var got []string
	for _, r := range ofType(rs, "state") {
		got = append(got, js(strip(r)))
	}
	want := []string{
		`{"state":"running","type":"state"}`,
		`{"error":{"code":-32603,"message":"boom"},"state":"idle","stopReason":"error","type":"state"}`,
		`{"state":"idle","stopReason":"_acme_budget","type":"state"}`,
		`{"state":"unknown","type":"state"}`,
		`{"state":"idle","type":"state"}`,
		`{"state":"ended","type":"state"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
}

// TestSessionResume: state resumed at the response; history replayed before
// it carries observedAt and no ts (ASR-707); the replayed state equal to
// the stream's latest is not written again; a prior stream continues its
// seqs and declared losses without a second header, whether the store's
// view came in the start request or in a session frame.
func TestSessionResume(t *testing.T) {
	priorLines := []string{
		`{"type":"header","asr":"0.1","sessionId":"s1","producer":{"method":"recorder","name":"acptap","lossy":["inference","message.author","timestamps","usage"]},"workspace":{"roots":[{"id":"root0","path":"/w/proj"}]}}`,
		`{"type":"state","seq":1,"id":"r1","state":"idle"}`,
		`{"type":"declaration","seq":2,"id":"r2","lossy":["reasoning"]}`,
	}
	resume := []string{initReq, initResp,
		`c2a {"jsonrpc":"2.0","id":1,"method":"session/resume","params":{"sessionId":"s1","cwd":"/w/proj","replayFrom":{"type":"start"}}}`,
		upd(`{"sessionUpdate":"agent_message","messageId":"old","content":[{"type":"text","text":"earlier"}]}`),
		upd(`{"sessionUpdate":"agent_thought_chunk","messageId":"old2","content":{"type":"image","data":"","mimeType":"image/png"}}`),
		upd(`{"sessionUpdate":"state_update","state":"idle"}`),
		`a2c {"jsonrpc":"2.0","id":1,"result":{}}`,
		permReq("3", `{"type":"command","command":"ls","cwd":"/"}`),
		upd(chunkA), idle,
	}
	withFrame := append([]string{resume[0], resume[1], `session {"id":"s1","connections":2,"prior":[` + strings.Join(priorLines, ",") + `]}`}, resume[2:]...)
	runs := map[string][]sdk.Output{
		"session frame": mapAll(t, startReq(""), parseFrames(t, wire(withFrame...))),
	}
	for name, outs := range runs {
		t.Run(name, func(t *testing.T) {
			rs := records(t, outs, "s1")
			if len(rs) == 0 || rs[0]["type"] == "header" {
				t.Fatalf("a prior stream gets no second header: %s", js(rs))
			}
			var got []string
			for _, r := range rs {
				got = append(got, js([]any{r["seq"], r["type"], r["ts"] != nil, r["observedAt"] != nil, r["state"], r["requestId"]}))
			}
			want := []string{
				`[3,"message",false,true,null,null]`, `[4,"message",false,true,null,null]`,
				`[5,"state",true,false,"resumed",null]`, `[6,"permission",true,false,null,"2:3"]`,
				`[7,"message",true,false,null,null]`, `[8,"state",true,false,"idle",null]`,
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSessionFork: the fork's stream carries lineage (ASR-718).
func TestSessionFork(t *testing.T) {
	outs := mapAll(t, startReq(""), parseFrames(t, opened(
		`c2a {"jsonrpc":"2.0","id":4,"method":"session/fork","params":{"sessionId":"s1","cwd":"/w/proj"}}`,
		`a2c {"jsonrpc":"2.0","id":4,"result":{"sessionId":"s1-fork"}}`,
	)))
	h := records(t, outs, "s1-fork")[0]
	want := `{"forkedFrom":{"evidence":"native_field","session":"s1"},"inherits":{"evidence":"native_field","from":"s1","mode":"copied"}}`
	if js(h["lineage"]) != want {
		t.Errorf("lineage = %s", js(h["lineage"]))
	}
}
