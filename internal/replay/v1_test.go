package replay

import (
	"encoding/json"
	"testing"

	"github.com/acptap/acptap/sdk/asr"
)

// TestNormalizeV1: the source's view in the form a replay to ACP v1
// presents it, each change named under its v1 loss category.
func TestNormalizeV1(t *testing.T) {
	s := stream(t,
		`{"type":"message","seq":1,"id":"r1","messageId":"m1","role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"},{"type":"_acme","x":1}]}`,
		`{"type":"message","seq":2,"id":"r2","messageId":"m2","role":"assistant","content":[{"type":"_acme","x":1}]}`,
		`{"type":"tool_call","seq":3,"id":"r3","callId":"c1","name":"edit","kind":"_acme_kind"}`,
		`{"type":"file_change","seq":4,"id":"r4","cause":{"callId":"c1"},"changes":[{"op":"modify","path":{"root":"root0","path":"a.go"},"_meta":{"org.acptap/oldText":"x","org.acptap/newText":"y"}},{"op":"delete","path":{"root":"root0","path":"b.go"}}],"patch":{"format":"git_patch","text":"-x\n+y\n"}}`,
		`{"type":"tool_result","seq":5,"id":"r5","callId":"c1","status":"cancelled","exec":{"terminalId":"t1"}}`,
		`{"type":"terminal","seq":6,"id":"r6","terminalId":"t1","command":"ls"}`,
		`{"type":"plan","seq":7,"id":"r7","planId":"p1","planType":"items","entries":[{"content":"x","priority":"high","status":"pending"}]}`,
		`{"type":"plan","seq":8,"id":"r8","planId":"p2","planType":"items","entries":[{"content":"y","priority":"_acme","status":"cancelled"}]}`,
		`{"type":"plan","seq":9,"id":"r9","planId":"p3","planType":"_acme_graph","entries":[]}`,
	)
	ents, drops := NormalizeV1(s)
	got := map[string]string{}
	var keys []string
	for _, e := range ents {
		b, _ := json.Marshal(e.Fields)
		got[e.Key] = string(b)
		keys = append(keys, e.Key)
	}
	want := map[string]string{
		"message:m1": `{"content":[{"text":"ab","type":"text"}],"role":"assistant"}`,
		"tool:c1":    `{"changes":[{"changes":[{"fileType":"","mimeType":"","oldPath":null,"op":"modify","path":"/w/a.go"}],"patch":null}],"input":null,"kind":"other","locations":null,"name":"edit","result":{"displayContent":null,"raw":null,"status":"failed","terminalId":""},"title":""}`,
		"plan:plan":  `{"entries":[{"content":"y","priority":"medium","status":"pending"}],"planType":"items"}`,
	}
	if len(keys) != 3 || keys[0] != "message:m1" || keys[1] != "tool:c1" || keys[2] != "plan:plan" {
		t.Errorf("entities %v", keys)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s:\n got  %s\n want %s", k, got[k], w)
		}
	}
	cats := map[string]bool{}
	for _, d := range drops {
		cats[d.Category] = true
	}
	for _, c := range []string{asr.LossV1Chunks, asr.LossV1Content, asr.LossV1ToolKind, asr.LossV1Diffs, asr.LossV1ToolStatus, asr.LossV1Terminals, asr.LossV1Plans} {
		if !cats[c] {
			t.Errorf("no drop under %s: %+v", c, drops)
		}
	}
}

// TestAddCategory: a category is added in order, or counted into the one
// there.
func TestAddCategory(t *testing.T) {
	r := LossReport{Categories: []Category{{Category: "a", Records: 1}, {Category: "c", Records: 2, Detail: "x"}}}
	r.AddCategory("b", 3, "")
	r.AddCategory("c", 1, "y")
	r.AddCategory("d", 0, "")
	b, _ := json.Marshal(r.Categories)
	if string(b) != `[{"category":"a","records":1},{"category":"b","records":3},{"category":"c","records":3,"detail":"x; y"}]` {
		t.Errorf("categories %s", b)
	}
}

// TestStreamLossy: a stream's declared losses are its header's and its
// declarations'.
func TestStreamLossy(t *testing.T) {
	s := stream(t, `{"type":"declaration","seq":1,"id":"r1","lossy":["b","a"]}`)
	if len(s.Lossy) != 2 || s.Lossy[0] != "a" || s.Lossy[1] != "b" {
		t.Errorf("lossy %v", s.Lossy)
	}
}
