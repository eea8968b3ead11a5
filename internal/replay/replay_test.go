package replay

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

func strp(s string) *string { return &s }

func TestToolStatus(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"completed", "completed", true}, {"failed", "failed", true}, {"denied", "failed", true},
		{"cancelled", "cancelled", true}, {"interrupted", "cancelled", true}, {"unknown", "other", true},
		{"_acme", "_acme", true}, {"timeout", "other", true}, {"partial", "", false}, {"", "", false},
	}
	for _, tt := range tests {
		got, ok := ToolStatus(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ToolStatus(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestAbsPath(t *testing.T) {
	roots := []asr.Root{{ID: "root0", Path: strp("/w/proj/")}, {ID: "root1", Path: nil}, {ID: "root2", Path: strp(`C:\src`)}}
	tests := []struct {
		ref  asr.PathRef
		want string
		ok   bool
	}{
		{asr.PathRef{Root: strp("root0"), Path: "a/b.go"}, "/w/proj/a/b.go", true},
		{asr.PathRef{Root: strp("root0"), Path: ""}, "/w/proj/", true},
		{asr.PathRef{Root: nil, Path: "/etc/hosts"}, "/etc/hosts", true},
		{asr.PathRef{Root: strp("root1"), Path: "x"}, "", false},
		{asr.PathRef{Root: strp("root9"), Path: "x"}, "", false},
		{asr.PathRef{Root: strp("root2"), Path: `pkg\a.go`}, `C:\src\pkg\a.go`, true},
	}
	for _, tt := range tests {
		got, ok := AbsPath(roots, tt.ref)
		if got != tt.want || ok != tt.ok {
			t.Errorf("AbsPath(%v) = %q, %v; want %q, %v", tt.ref, got, ok, tt.want, tt.ok)
		}
	}
	// The round trip: a path made relative by asr.Ref comes back.
	for _, abs := range []string{"/w/proj/x/y.go", "/w/proj", "/elsewhere/z"} {
		ref := asr.Ref(roots, abs)
		if got, ok := AbsPath(roots, ref); !ok || strings.TrimSuffix(got, "/") != abs {
			t.Errorf("AbsPath(Ref(%q)) = %q, %v", abs, got, ok)
		}
	}
}

func TestReasoningText(t *testing.T) {
	tests := []struct {
		part string
		want string
		ok   bool
	}{
		{`{"type":"reasoning","text":"a"}`, "a", true},
		{`{"type":"reasoning","text":"","summary":["x"]}`, "", true},
		{`{"type":"reasoning","summary":["x","y"]}`, "x\n\ny", true},
		{`{"type":"reasoning","summary":[{"type":"summary_text","text":"x"},{"text":"y"}]}`, "x\n\ny", true},
		{`{"type":"reasoning","opaque":"zz","signature":"s"}`, "", false},
		{`{"type":"reasoning","summary":[]}`, "", false},
	}
	for _, tt := range tests {
		_, o := PartType(json.RawMessage(tt.part))
		got, ok := ReasoningText(o)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ReasoningText(%s) = %q, %v; want %q, %v", tt.part, got, ok, tt.want, tt.ok)
		}
	}
	if got := ThoughtID("m1", 2); got != "m1#thought-2" {
		t.Errorf("ThoughtID = %q", got)
	}
}

func TestTallyReport(t *testing.T) {
	var ta Tally
	ta.Add("b", 2, "x")
	ta.Add("a", 1, "")
	ta.Add("b", 1, "w")
	ta.Add("b", 1, "x")
	ta.Add("zero", 0, "never listed")
	for i := 0; i < MaxOmitted+3; i++ {
		ta.Omit("r"+strconv.Itoa(i), "c", "why")
	}
	r := ta.Report()
	want := []Category{{Category: "a", Records: 1}, {Category: "b", Records: 4, Detail: "w; x"}, {Category: "c", Records: MaxOmitted + 3}}
	if diff := cmp.Diff(want, r.Categories); diff != "" {
		t.Errorf("categories (-want +got):\n%s", diff)
	}
	if len(r.Omitted) != MaxOmitted+1 || !strings.Contains(r.Omitted[MaxOmitted].Reason, "3 more") {
		t.Errorf("omitted: %d entries, last %+v", len(r.Omitted), r.Omitted[len(r.Omitted)-1])
	}
	b := r.Marshal()
	back, err := ParseLossReport(b)
	if err != nil || back.Complete || back.Note != Note || len(back.Categories) != 3 {
		t.Errorf("ParseLossReport(Marshal()) = %+v, %v", back, err)
	}
	r.Complete = true
	if !strings.Contains(string(r.Marshal()), `"complete": false`) {
		t.Error("Marshal presented a report as complete")
	}
}

const hdr = `{"type":"header","asr":"0.1","sessionId":"s1","producer":{"method":"recorder","name":"t","lossy":[]},"workspace":{"roots":[{"id":"root0","path":"/w"},{"id":"root1","path":null}]}}`

func stream(t *testing.T, lines ...string) *Stream {
	t.Helper()
	s, err := ReadStream(strings.NewReader(hdr + "\n" + strings.Join(lines, "\n") + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// base is a small source stream: a prompt, a reasoning + text answer, a
// tool call with a diff and a result, a plan revised.
var base = []string{
	`{"type":"message","seq":1,"id":"r1","messageId":"u1","role":"user","origin":"prompt","content":[{"type":"text","text":"hi"}]}`,
	`{"type":"message","seq":2,"id":"r2","messageId":"m1","role":"assistant","content":[{"type":"reasoning","text":"think"},{"type":"text","text":"hello"},{"type":"refusal","text":"no"}]}`,
	`{"type":"tool_call","seq":3,"id":"r3","callId":"c1","name":"edit","input":{"p":1},"locations":[{"path":{"root":"root0","path":"a.go"}}]}`,
	`{"type":"file_change","seq":4,"id":"r4","cause":{"callId":"c1"},"changes":[{"op":"modify","path":{"root":"root0","path":"a.go"}}]}`,
	`{"type":"tool_result","seq":5,"id":"r5","callId":"c1","status":"denied","displayContent":[{"type":"text","text":"nope"}]}`,
	`{"type":"plan","seq":6,"id":"r6","planId":"p1","entries":[{"content":"x","status":"pending"}]}`,
	`{"type":"plan","seq":7,"id":"r7","supersedes":"r6","planId":"p1","entries":[{"content":"x","status":"completed"}]}`,
}

// replayedOf is how base looks once recorded from its replay.
var replayedOf = []string{
	`{"type":"message","seq":1,"id":"r1","messageId":"u1","role":"user","content":[{"type":"text","text":"hi"}]}`,
	`{"type":"message","seq":2,"id":"r2","messageId":"m1#thought-0","role":"assistant","content":[{"type":"reasoning","text":"think"}]}`,
	`{"type":"message","seq":3,"id":"r3","messageId":"m1","role":"assistant","content":[{"type":"text","text":"hello"},{"type":"text","text":"no"}]}`,
	`{"type":"tool_call","seq":4,"id":"r4","callId":"c1","name":"edit","input":{"p":1},"locations":[{"path":{"root":"root0","path":"a.go"}}]}`,
	`{"type":"file_change","seq":5,"id":"r5","cause":{"callId":"c1"},"changes":[{"op":"modify","path":{"root":"root0","path":"a.go"}}]}`,
	`{"type":"tool_result","seq":6,"id":"r6","callId":"c1","status":"failed","displayContent":[{"type":"text","text":"nope"}]}`,
	`{"type":"plan","seq":7,"id":"r7","planId":"p1","entries":[{"content":"x","status":"completed"}]}`,
}

func TestCompareHolds(t *testing.T) {
	res := Compare(stream(t, base...), stream(t, replayedOf...), LossReport{})
	if len(res.Differences) != 0 || res.Entities != 5 {
		t.Errorf("entities %d, differences %v", res.Entities, res.Differences)
	}
}

// TestCompareFindsDifferences: each kind of change to the recording is a
// difference; the check is not vacuous.
func TestCompareFindsDifferences(t *testing.T) {
	mut := func(i int, from, to string) []string {
		out := append([]string(nil), replayedOf...)
		out[i] = strings.Replace(out[i], from, to, 1)
		return out
	}
	drop := func(i int) []string {
		out := append([]string(nil), replayedOf[:i]...)
		return append(out, replayedOf[i+1:]...)
	}
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"content", mut(0, `"hi"`, `"hey"`), []string{"message:u1 content differs"}},
		{"role", mut(0, `"role":"user"`, `"role":"assistant"`), []string{"message:u1 role differs"}},
		{"thought text", mut(1, "think", "thought"), []string{"message:m1#thought-0 content differs"}},
		{"tool name", mut(3, `"edit"`, `"write"`), []string{"tool:c1 name differs"}},
		{"input", mut(3, `{"p":1}`, `{"p":2}`), []string{"tool:c1 input differs"}},
		{"status", mut(5, "failed", "completed"), []string{"tool:c1 result differs"}},
		{"display", mut(5, "nope", "yes"), []string{"tool:c1 result differs"}},
		{"file op", mut(4, "modify", "add"), []string{"tool:c1 changes differs"}},
		{"file path", mut(4, `"a.go"}}]}`, `"b.go"}}]}`), []string{"tool:c1 changes differs"}},
		{"plan", mut(6, "completed", "pending"), []string{"plan:p1 entries differs"}},
		{"missing", drop(6), []string{"plan:p1 missing from the recording of the replay"}},
		{"id", mut(6, `"planId":"p1"`, `"planId":"p2"`), []string{"plan:p1 missing from the recording of the replay", "plan:p2 in the recording of the replay but not in the source's context view"}},
		{"order", append([]string{replayedOf[6]}, replayedOf[:6]...), []string{"plan:p1 out of order: recorded before tool:c1, which comes first in the source"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Compare(stream(t, base...), stream(t, tt.lines...), LossReport{})
			var got []string
			for _, d := range res.Differences {
				s := d.Entity
				if d.Field != "" {
					s += " " + d.Field
				}
				got = append(got, s+" "+d.Why)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("differences (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCompareLossesNeedTheirCategory: what the replay must leave out is
// excused only when the report names its category.
func TestCompareLossesNeedTheirCategory(t *testing.T) {
	src := stream(t,
		`{"type":"message","seq":1,"id":"r1","messageId":"m1","role":"assistant","content":[{"type":"reasoning","opaque":"x"},{"type":"text","text":"a"}]}`,
		`{"type":"tool_call","seq":2,"id":"r2","callId":"c1","name":"w"}`,
		`{"type":"file_change","seq":3,"id":"r3","cause":{"callId":"c1"},"changes":[{"op":"add","path":{"root":"root1","path":"s"}}]}`,
		`{"type":"message","seq":4,"id":"r4","messageId":"sys","role":"system","content":[]}`,
	)
	rec := stream(t,
		`{"type":"message","seq":1,"id":"r1","messageId":"m1","role":"assistant","content":[{"type":"text","text":"a"}]}`,
		`{"type":"tool_call","seq":2,"id":"r2","callId":"c1","name":"w"}`,
	)
	res := Compare(src, rec, LossReport{})
	if len(res.Differences) != 3 || len(res.Excused) != 0 {
		t.Errorf("without categories: differences %v, excused %v", res.Differences, res.Excused)
	}
	report := LossReport{Categories: []Category{{Category: asr.LossReasoning, Records: 1}, {Category: asr.LossRedactedRoot, Records: 1}, {Category: asr.LossUnreplayable, Records: 1}}}
	res = Compare(src, rec, report)
	if len(res.Differences) != 0 || len(res.Excused) != 3 {
		t.Errorf("with categories: differences %v, excused %v", res.Differences, res.Excused)
	}
}

// TestNormalizeRecordingRule: a result whose status ACP cannot carry as
// final and that carries nothing is not expected in the recording.
func TestNormalizeRecordingRule(t *testing.T) {
	ents, drops := Normalize(stream(t,
		`{"type":"tool_call","seq":1,"id":"r1","callId":"c1"}`,
		`{"type":"tool_result","seq":2,"id":"r2","callId":"c1","status":"unknown"}`,
		`{"type":"tool_call","seq":3,"id":"r3","callId":"c2"}`,
		`{"type":"tool_result","seq":4,"id":"r4","callId":"c2","status":"unknown","raw":1}`,
	))
	if len(drops) != 0 || ents[0].Fields["result"] != nil {
		t.Errorf("c1: %v, drops %v", ents[0].Fields["result"], drops)
	}
	if r, ok := ents[1].Fields["result"].(map[string]any); !ok || r["status"] != "other" {
		t.Errorf("c2 result = %v", ents[1].Fields["result"])
	}
}

func TestResumeExchange(t *testing.T) {
	h, err := asr.ReadHeader([]byte(hdr))
	if err != nil {
		t.Fatal(err)
	}
	before, after := ResumeExchange(h)
	if len(before) != 3 || len(after) != 1 || before[0].Dir != sdk.C2A || before[1].Dir != sdk.A2C || before[2].Dir != sdk.C2A || after[0].Dir != sdk.A2C {
		t.Fatalf("exchange shape: %v %v", before, after)
	}
	var resume struct {
		Method string `json:"method"`
		Params struct {
			SessionID  string          `json:"sessionId"`
			Cwd        string          `json:"cwd"`
			Dirs       []string        `json:"additionalDirectories"`
			ReplayFrom json.RawMessage `json:"replayFrom"`
		} `json:"params"`
	}
	if err := json.Unmarshal(before[2].Line, &resume); err != nil {
		t.Fatal(err)
	}
	if resume.Method != "session/resume" || resume.Params.SessionID != "s1" || resume.Params.Cwd != "/w" ||
		len(resume.Params.Dirs) != 1 || !strings.HasPrefix(resume.Params.Dirs[0], "/.acptap-redacted-root/") ||
		string(resume.Params.ReplayFrom) != `{"type":"start"}` {
		t.Errorf("resume = %+v", resume)
	}
}
