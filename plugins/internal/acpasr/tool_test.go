package acpasr

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestASR702_CallIDNative: toolCallId verbatim as callId, callIdSource native.
func TestASR702_CallIDNative(t *testing.T) {
	rs := records(t, mapAll(t, startReq(""), parseFrames(t, opened(
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"toolu_01 Ä/x","name":"n","status":"completed"}`)))), "s1")
	for _, r := range append(ofType(rs, "tool_call"), ofType(rs, "tool_result")...) {
		if r["callId"] != "toolu_01 Ä/x" {
			t.Errorf("callId = %v", r["callId"])
		}
	}
	if c := ofType(rs, "tool_call")[0]; c["callIdSource"] != "native" {
		t.Errorf("callIdSource = %v", c["callIdSource"])
	}
}

// TestASR714_ToolResult: display content from {type: content} items,
// rawOutput as raw, the terminal as exec, no content, capture.content absent.
func TestASR714_ToolResult(t *testing.T) {
	tests := []struct {
		name, update, call, result string
	}{
		{"content, raw output and terminal",
			`{"sessionUpdate":"tool_call_update","toolCallId":"t","name":"sh","title":"Run tests","kind":"execute","rawInput":{"cmd":"go test"},"status":"failed","rawOutput":{"exit":1},"content":[{"type":"content","content":{"type":"text","text":"FAIL"}},{"type":"terminal","terminalId":"term-1"}]}`,
			`{"callId":"t","callIdSource":"native","input":{"cmd":"go test"},"kind":"execute","name":"sh","title":"Run tests","type":"tool_call"}`,
			`{"callId":"t","capture":{"content":{"state":"absent"}},"displayContent":[{"text":"FAIL","type":"text"}],"exec":{"terminalId":"term-1"},"linkage":"exact","raw":{"exit":1},"status":"failed","type":"tool_result","assembly":"folded"}`},
		{"no name: capture.name absent",
			`{"sessionUpdate":"tool_call_update","toolCallId":"t","title":"Something","status":"cancelled"}`,
			`{"callId":"t","callIdSource":"native","capture":{"name":{"state":"absent"}},"title":"Something","type":"tool_call"}`,
			`{"callId":"t","capture":{"content":{"state":"absent"}},"linkage":"exact","status":"cancelled","type":"tool_result","assembly":"folded"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := records(t, mapAll(t, startReq(""), parseFrames(t, opened(upd(tt.update)))), "s1")
			call, res := strip(ofType(rs, "tool_call")[0]), strip(ofType(rs, "tool_result")[0])
			if js(call) != js(decode(tt.call)) {
				t.Errorf("tool_call = %s\nwant        %s", js(call), js(decode(tt.call)))
			}
			if js(res) != js(decode(tt.result)) {
				t.Errorf("tool_result = %s\nwant          %s", js(res), js(decode(tt.result)))
			}
			if _, ok := res["content"]; ok {
				t.Error("tool_result has content")
			}
		})
	}
}

// TestASR705_ToolFinalOnStatus: a tool call is written when its status
// becomes completed, failed or cancelled, without waiting for the turn.
func TestASR705_ToolFinalOnStatus(t *testing.T) {
	sess, _ := newMapper().Start(context.Background(), startReq(""))
	frames := parseFrames(t, opened(
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t","name":"n","status":"pending"}`),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"in_progress"}`),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"completed"}`),
	))
	early, _ := sess.Map(context.Background(), frames[:6])
	if n := len(records(t, early, "s1")); n != 1 { // the header only
		t.Fatalf("records before completion: %s", js(records(t, early, "s1")))
	}
	done, _ := sess.Map(context.Background(), frames[6:])
	if got := types(records(t, done, "s1")); !cmp.Equal(got, []string{"declaration", "tool_call", "tool_result"}) {
		t.Errorf("at completion: %v", got)
	}
}

// TestASR705_OrderOfFirstSight: records are written in the order their
// entities were first seen, so a tool call finishing mid-turn does not
// jump ahead of the message before it; later chunks supersede.
func TestASR705_OrderOfFirstSight(t *testing.T) {
	rs := records(t, mapAll(t, startReq(""), parseFrames(t, opened(
		upd(chunkA),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t2","name":"slow","status":"in_progress"}`),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t3","name":"fast","status":"completed"}`),
		upd(chunkB),
		idle,
	))), "s1")
	var got []string
	for _, r := range rs[1:] {
		got = append(got, r["type"].(string)+":"+str(r["messageId"])+str(r["callId"])+">"+str(r["supersedes"]))
	}
	want := []string{"message:m>", "declaration:>", "tool_call:t2>", "declaration:>", "tool_call:t3>", "tool_result:t3>", "message:m>r1", "state:>"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

// TestToolStatusAtTurnEnd: pending calls stay dangling (tool_call only); an
// unknown status with output becomes "unknown", a vendor one stays as is
// (decision 2); a later final status supersedes.
func TestToolStatusAtTurnEnd(t *testing.T) {
	rs := records(t, mapAll(t, startReq(""), parseFrames(t, opened(
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"p","name":"n","status":"in_progress","rawOutput":1}`),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"o","name":"n","status":"other","rawOutput":"x"}`),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"v","name":"n","status":"_acme_paused","content":[{"type":"content","content":{"type":"text","text":"…"}}]}`),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"e","name":"n","status":"whatever"}`),
		idle,
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"o","status":"completed"}`),
	))), "s1")
	var got []string
	for _, r := range ofType(rs, "tool_result") {
		got = append(got, r["callId"].(string)+":"+r["status"].(string)+">"+str(r["supersedes"]))
	}
	if diff := cmp.Diff([]string{"o:unknown>", "v:_acme_paused>", "o:completed>r5"}, got); diff != "" {
		t.Errorf("tool results (-want +got):\n%s", diff)
	}
	if n := len(ofType(rs, "tool_call")); n != 4 {
		t.Errorf("%d tool_call records, want 4 (dangling calls are recorded)", n)
	}
}

// TestToolContentPatch: a whole content replaces chunks; null clears;
// locations and rawInput follow the patch rule.
func TestToolContentPatch(t *testing.T) {
	rs := records(t, mapAll(t, startReq(""), parseFrames(t, opened(
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t","name":"n","title":"T","rawInput":{"a":1},"locations":[{"path":"/w/proj/x"}]}`),
		upd(`{"sessionUpdate":"tool_call_content_chunk","toolCallId":"t","content":{"type":"content","content":{"type":"text","text":"old"}}}`),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t","content":[{"type":"content","content":{"type":"text","text":"new"}}],"title":null,"locations":null,"rawInput":{"b":2}}`),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"completed"}`),
	))), "s1")
	call, res := ofType(rs, "tool_call")[0], ofType(rs, "tool_result")[0]
	if call["title"] != nil || call["locations"] != nil || js(call["input"]) != `{"b":2}` {
		t.Errorf("tool_call = %s", js(call))
	}
	if js(res["displayContent"]) != `[{"text":"new","type":"text"}]` || res["assembly"] != "folded" {
		t.Errorf("tool_result = %s", js(res))
	}
}
