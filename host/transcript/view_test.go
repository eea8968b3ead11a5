package transcript

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestASR706_BuildMergesEntities: a tool call's result and file change
// land in its item, and a record that supersedes another (ASR-706)
// updates the item in place, marked revised.
func TestASR706_BuildMergesEntities(t *testing.T) {
	const stream = `{"type":"header","asr":"0.1","sessionId":"s1","createdAt":"2026-12-01T00:00:00Z","producer":{"method":"recorder","name":"acptap","lossy":["usage"]}}
{"type":"message","seq":1,"id":"r1","messageId":"u1","role":"user","content":[{"type":"text","text":"Fix it"}]}
{"type":"message","seq":2,"id":"r2","messageId":"a1","role":"assistant","content":[{"type":"reasoning","text":"thinking"}]}
{"type":"tool_call","seq":3,"id":"r3","callId":"c1","name":"edit","title":"Edit main.go","kind":"edit","input":{"path":"main.go"},"native":{"ref":{"wire":"w.jsonl","frames":[5,6]}}}
{"type":"permission","seq":4,"id":"r4","status":"pending","requestId":"p1","title":"Allow?","options":[{"optionId":"ok","name":"Allow once","kind":"allow_once"}]}
{"type":"permission","seq":5,"id":"r5","status":"resolved","supersedes":"r4","requestId":"p1","title":"Allow?","options":[{"optionId":"ok","name":"Allow once","kind":"allow_once"}],"decision":"approved","selectedOptionId":"ok"}
{"type":"file_change","seq":6,"id":"r6","status":"applied","cause":{"callId":"c1"},"changes":[{"op":"modify","path":{"root":"root0","path":"main.go"}}],"patch":{"format":"git_patch","text":"-a\n+b\n"}}
{"type":"tool_result","seq":7,"id":"r7","status":"completed","callId":"c1","displayContent":[{"type":"text","text":"done"}]}
{"type":"declaration","seq":8,"id":"r8","lossy":["tool_result.content"]}
{"type":"message","seq":9,"id":"r9","supersedes":"r1","messageId":"u1","role":"user","origin":"prompt","content":[{"type":"text","text":"Fix it"}]}
`
	v, err := Build(strings.NewReader(stream), Options{})
	if err != nil {
		t.Fatal(err)
	}
	kinds := []string{}
	for _, it := range v.Items {
		kinds = append(kinds, it.Kind)
	}
	if got := strings.Join(kinds, ","); got != "message,message,tool,permission,declaration" {
		t.Fatalf("items %s", got)
	}
	u := v.Items[0]
	if u.Origin != "prompt" || !u.Revised || strings.Join(u.Records, ",") != "r1,r9" {
		t.Errorf("user message %+v", u)
	}
	if !v.Items[1].Reasoning {
		t.Error("a reasoning-only message is not marked")
	}
	tool := v.Items[2].Tool
	if tool.Status != "completed" || len(tool.Diffs) != 1 || tool.Diffs[0].Patch != "-a\n+b\n" || tool.Result[0].Text != "done" {
		t.Errorf("tool %+v", tool)
	}
	if r := v.Items[2].Refs; len(r) != 1 || r[0].Wire != "w.jsonl" || len(r[0].Frames) != 2 {
		t.Errorf("refs %+v", r)
	}
	if p := v.Items[3].Permission; p.Decision != "approved" || p.Selected != "Allow once" {
		t.Errorf("permission %+v", p)
	}
	if len(v.Losses) != 2 || v.Losses[0].Record != "header" || v.Losses[1].Record != "r8" {
		t.Errorf("losses %+v", v.Losses)
	}
}

func TestBuildWindows(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"header","asr":"0.1","sessionId":"s1","createdAt":"2026-12-01T00:00:00Z","producer":{"method":"recorder","name":"acptap","lossy":[]}}` + "\n")
	for i := 1; i <= 25; i++ {
		b.WriteString(`{"type":"state","seq":` + itoa(i) + `,"id":"r` + itoa(i) + `","state":"running"}` + "\n")
	}
	var seen int
	for from := uint64(0); ; {
		v, err := Build(strings.NewReader(b.String()), Options{From: from, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		seen += len(v.Items)
		if v.Next == 0 {
			break
		}
		from = v.Next
	}
	if seen != 25 {
		t.Errorf("windows held %d items, want 25", seen)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestBuildGoldenStreamsHaveNoProblems(t *testing.T) {
	m, _ := filepath.Glob("../../plugins/*/testdata/*/*.asr.jsonl")
	m2, _ := filepath.Glob("../../plugins/*/testdata/*.asr.jsonl")
	m3, _ := filepath.Glob("../../sdk/asr/testdata/*.asr.jsonl")
	m2 = append(m2, m3...)
	m = append(m, m2...)
	if len(m) == 0 {
		t.Fatal("no golden streams found")
	}
	for _, p := range m {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		v, err := Build(f, Options{})
		f.Close()
		if err != nil || len(v.Problems) > 0 {
			t.Errorf("%s: %v %v", p, err, v.Problems)
		}
	}
	t.Logf("%d golden streams", len(m))
}
