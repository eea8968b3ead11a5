package acpasr

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

const gitPatch = "diff --git a/main.go b/main.go\n--- a/main.go\n+++ b/main.go\n@@ -1 +1 @@\n-package x\n+package main\n"

// TestASR715_DiffToFileChange: a diff in the call's final content is a
// file_change: cause, changes with PathRefs, patch, precision, and a
// status from the call's.
func TestASR715_DiffToFileChange(t *testing.T) {
	diff := `{"type":"diff","changes":[{"operation":"modify","path":"/w/proj/main.go","fileType":"text","mimeType":"text/x-go"},{"operation":"move","oldPath":"/w/proj/a.txt","path":"/elsewhere/b.txt"},{"operation":"_acme_chmod","path":"/w/proj"}],"patch":{"format":"git_patch","text":` + js(gitPatch) + `}}`
	tests := []struct {
		name, status, item, want string
	}{
		{"completed → applied, with patch", "completed", diff,
			`{"cause":{"callId":"t"},"changes":[{"fileType":"text","mimeType":"text/x-go","op":"modify","path":{"path":"main.go","root":"root0"}},{"oldPath":{"path":"a.txt","root":"root0"},"op":"move","path":{"path":"/elsewhere/b.txt","root":null}},{"op":"_acme_chmod","path":{"path":"","root":"root0"}}],"patch":{"format":"git_patch","text":` + js(gitPatch) + `},"precision":"hunks","status":"applied","type":"file_change"}`},
		{"failed → failed, no patch → unknown precision", "failed", `{"type":"diff","changes":[{"operation":"add","path":"/w/lib/new.go"}]}`,
			`{"cause":{"callId":"t"},"changes":[{"op":"add","path":{"path":"new.go","root":"root1"}}],"precision":"unknown","status":"failed","type":"file_change"}`},
		{"cancelled → unknown", "cancelled", `{"type":"diff","changes":[{"operation":"delete","path":"/w/proj/x"}]}`,
			`{"cause":{"callId":"t"},"changes":[{"op":"delete","path":{"path":"x","root":"root0"}}],"precision":"unknown","status":"unknown","type":"file_change"}`},
		{"vendor patch format kept", "completed", `{"type":"diff","changes":[],"patch":{"format":"_acme_unified","text":"@@"}}`,
			`{"cause":{"callId":"t"},"changes":[],"patch":{"format":"_acme_unified","text":"@@"},"precision":"hunks","status":"applied","type":"file_change"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := records(t, mapAll(t, startReq(""), parseFrames(t, opened(
				upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t","name":"edit","kind":"edit","content":[`+tt.item+`]}`),
				upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"`+tt.status+`"}`),
			))), "s1")
			fcs := ofType(rs, "file_change")
			if len(fcs) != 1 {
				t.Fatalf("file_changes = %s", js(fcs))
			}
			if got := js(strip(fcs[0])); got != js(decode(tt.want)) {
				t.Errorf("file_change = %s\nwant          %s", got, js(decode(tt.want)))
			}
		})
	}
}

// TestASR715_ProposedThenApplied: a diff on a call with no final status at
// the turn's end is proposed; the call's completion supersedes it.
func TestASR715_ProposedThenApplied(t *testing.T) {
	rs := records(t, mapAll(t, startReq(""), parseFrames(t, opened(
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t","name":"edit","status":"in_progress"}`),
		upd(`{"sessionUpdate":"tool_call_content_chunk","toolCallId":"t","content":{"type":"diff","changes":[{"operation":"add","path":"/w/proj/n.go"}]}}`),
		upd(`{"sessionUpdate":"state_update","state":"requires_action"}`),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"completed"}`),
	))), "s1")
	var got []string
	for _, r := range rs[1:] {
		got = append(got, r["type"].(string)+":"+str(r["status"])+">"+str(r["supersedes"]))
	}
	want := []string{"declaration:>", "tool_call:>", "file_change:proposed>", "state:>", "declaration:>", "file_change:applied>r3", "tool_result:completed>"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
}
