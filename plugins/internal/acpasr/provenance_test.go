package acpasr

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/acptap/acptap/sdk"
	"github.com/google/go-cmp/cmp"
)

// TestASR707_Timestamps: ts is the receipt time of the entity's first
// update, RFC 3339 UTC with milliseconds, tsSource recorder.
func TestASR707_Timestamps(t *testing.T) {
	frames := parseFrames(t, opened(upd(chunkA), upd(chunkB), idle))
	frames[4].At = time.Date(2026, 10, 26, 16, 30, 41, 207_999_999, time.FixedZone("CEST", 2*3600))
	msg := ofType(records(t, mapAll(t, startReq(""), frames), "s1"), "message")[0]
	if msg["ts"] != "2026-10-26T14:30:41.207Z" || msg["tsSource"] != "recorder" || msg["observedAt"] != nil {
		t.Errorf("message = %s", js(msg))
	}
}

// TestASR708_MetaFold: an upsert's _meta is patched key by key (null
// removes a key, _meta null clears all, nested objects replace whole);
// trace-context keys are kept; chunk _meta is not folded.
func TestASR708_MetaFold(t *testing.T) {
	rs := records(t, mapAll(t, startReq(""), parseFrames(t, opened(
		upd(`{"sessionUpdate":"agent_message","messageId":"m","_meta":{"traceparent":"00-a-b-01","keep":1,"drop":2,"nest":{"x":1,"y":2}}}`),
		upd(`{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"a"},"_meta":{"chunkOnly":true}}`),
		upd(`{"sessionUpdate":"agent_message","messageId":"m","_meta":{"drop":null,"nest":{"x":9},"new":"v"}}`),
		upd(`{"sessionUpdate":"agent_message","messageId":"m","_meta":{}}`),
		upd(`{"sessionUpdate":"agent_message","messageId":"cleared","_meta":{"a":1}}`),
		upd(`{"sessionUpdate":"agent_message","messageId":"cleared","_meta":null}`),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t","name":"n","_meta":{"k":1}}`),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"completed","_meta":{"k":null,"j":2}}`),
		idle,
	))), "s1")
	msgs := ofType(rs, "message")
	if got, want := js(msgs[0]["_meta"]), `{"keep":1,"nest":{"x":9},"new":"v","traceparent":"00-a-b-01"}`; got != want {
		t.Errorf("_meta = %s\nwant    %s", got, want)
	}
	if _, ok := msgs[1]["_meta"]; ok {
		t.Errorf("_meta null did not clear: %s", js(msgs[1]))
	}
	if got := js(ofType(rs, "tool_call")[0]["_meta"]); got != `{"j":2}` {
		t.Errorf("tool_call _meta = %s", got)
	}
}

// TestASR709_EnumsUnchanged: vendor and unknown enum values are recorded
// as sent where the field means the same.
func TestASR709_EnumsUnchanged(t *testing.T) {
	rs := records(t, mapAll(t, startReq(""), parseFrames(t, opened(
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t","name":"n","kind":"_acme_deploy","status":"completed"}`),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"u","name":"n","kind":"switch_mode","status":"failed"}`),
		upd(`{"sessionUpdate":"state_update","state":"_acme_waiting","stopReason":"max_turn_requests"}`),
	))), "s1")
	calls, results := ofType(rs, "tool_call"), ofType(rs, "tool_result")
	if calls[0]["kind"] != "_acme_deploy" || calls[1]["kind"] != "switch_mode" || results[1]["status"] != "failed" {
		t.Errorf("tool calls = %s %s", js(calls), js(results))
	}
	if st := ofType(rs, "state")[0]; st["state"] != "_acme_waiting" || st["stopReason"] != "max_turn_requests" {
		t.Errorf("state = %s", js(st))
	}
}

// TestASR723_NativeRef: every record names the wire log and the frames it
// came from, the same seqs as the output's FrameSeqs.
func TestASR723_NativeRef(t *testing.T) {
	for _, o := range mapAll(t, startReq(""), loadFrames(t, "turn")) {
		if o.Kind != sdk.ASRRecord {
			continue
		}
		var r struct {
			Native struct {
				Ref struct {
					Wire   string   `json:"wire"`
					Frames []uint64 `json:"frames"`
				} `json:"ref"`
			} `json:"native"`
		}
		if err := json.Unmarshal(o.JSON, &r); err != nil {
			t.Fatal(err)
		}
		if r.Native.Ref.Wire != testWire || len(r.Native.Ref.Frames) == 0 || !cmp.Equal(r.Native.Ref.Frames, o.FrameSeqs) {
			t.Errorf("native.ref = %+v, FrameSeqs %v in %s", r.Native.Ref, o.FrameSeqs, o.JSON)
		}
	}
}

// TestCaptureGap: a gap is declared (_org.acptap/capture_gap) in every open
// stream, and is in the header of a stream first seen after it.
func TestCaptureGap(t *testing.T) {
	outs := mapAll(t, startReq(""), parseFrames(t, opened(
		upd(chunkA),
		"gap a2c 3 120 capture queue full",
		"gap c2a 1 10 again",
		`a2c {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-late","update":{"sessionUpdate":"state_update","state":"running"}}}`,
	)))
	s1 := records(t, outs, "s1")
	decls := ofType(s1, "declaration")
	if len(decls) != 1 || js(decls[0]["lossy"]) != `["_org.acptap/capture_gap"]` || js(decls[0]["native"]) != fmt.Sprintf(`{"ref":{"frames":[6],"wire":%q}}`, testWire) {
		t.Errorf("declarations = %s", js(decls))
	}
	late := records(t, outs, "s-late")[0]
	if js(late["producer"].(map[string]any)["lossy"]) != `["_org.acptap/capture_gap","inference","message.author","timestamps","usage"]` {
		t.Errorf("late header = %s", js(late))
	}
	if n := len(diags(outs)); n < 2 {
		t.Errorf("gaps not diagnosed: %v", summaries(outs))
	}
}
