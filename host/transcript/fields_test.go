package transcript

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/acptap/acptap/sdk/aep"
)

// TestViewHasWhatShowPrints: every detail `acptap show` prints of a record
// is in the view the web viewer renders (the terminal and the web render
// one model).
func TestViewHasWhatShowPrints(t *testing.T) {
	f, err := os.Open("testdata/every-field.asr.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := Build(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]*Item{}
	for i := range v.Items {
		for _, r := range v.Items[i].Records {
			by[r] = &v.Items[i]
		}
	}
	check := func(rec, what string, ok bool) {
		t.Helper()
		if !ok {
			t.Errorf("%s: %s missing: %+v", rec, what, by[rec])
		}
	}
	m := by["r1"]
	check("r1", "author", m.Author == "bob")
	check("r1", "reasoning summary", m.Blocks[0].Text == "a\n\nb")
	check("r1", "link name and uri", m.Blocks[3].Name == "n" && m.Blocks[3].URI == "file:///x")
	check("r1", "unknown block type", m.Blocks[5].Type == "weird")
	check("r1", "invalid block", m.Blocks[6].Type == BlockInvalid)
	check("r2", "sender session (of the record; r32 revises it)", record(t, "r2").Item.From == "s9")
	check("r3", "severity", by["r3"].Severity == "warning")
	tool := by["r5"].Tool
	check("r5", "locations with roots and lines", strings.Join(tool.Paths, " ") == "root1:x.go:12 /abs/y .")
	check("r41", "exec terminal", tool.Exec == "t2")
	check("r40", "move source", len(tool.Diffs) == 1 && tool.Diffs[0].OldPath == "a.go" && tool.Diffs[0].Path == "b.go")
	check("r40", "the terminal that ran the tool", tool.Terminal != nil && tool.Terminal.ID == "t2")
	fc := by["r8"]
	check("r8", "root of a changed path", fc.Diffs[0].Path == "root1:z" && fc.Diffs[1].Path == "")
	check("r9", "permission subject", by["r9"].Permission.Command == "rm -rf")
	check("r12", "question id", by["r12"].Input.RequestID == "q1")
	check("r13", "plan id", by["r13"].Entity == "pl")
	term := tool.Terminal
	check("r14", "cwd, signal, binary output, no exit code", term.Cwd == "root1:sub" && term.Signal == "SIGKILL" && term.Binary == 1 && term.Exit == "")
	check("r15", "output not base64", by["r15"].Terminal.NotBase64)
	st := by["r17"].State
	check("r17", "background work, null stop reason", st.Background == "terminal t1" && st.StopReason == "")
	c := by["r18"]
	check("r18", "compaction status, error", c.Status == "failed" && string(c.Error) == `{"m":"x"}`)
	check("r19", "usage scope and window", by["r19"].Usage.Scope == "turn" && by["r19"].Usage.Window && !by["r19"].Usage.Priced)
	check("r21", "cleared title", by["r21"].Summary == "")
	check("r22", "config", by["r22"].Config.Mode == "ask" && by["r22"].Config.Options == 2)
	check("r23", "subagent's tool call", by["r23"].Cause == "c1")
	check("r25", "local copy", by["r25"].Through == "r3")
	check("r26", "prompt refusal", by["r26"].Failure != nil && by["r26"].Failure.Code == -32603 && by["r26"].Failure.Message == "bad")
	check("r32", "revision", by["r32"] == by["r2"] && by["r2"].Revised)
	if len(v.Problems) != 2 || v.Tail == 0 {
		t.Errorf("problems %q, tail %d", v.Problems, v.Tail)
	}
}

// record reads one record of the test stream by the transcript's reader.
func record(t *testing.T, id string) *Record {
	t.Helper()
	f, err := os.Open("testdata/every-field.asr.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := NewReader(f, 0, 0)
	for {
		e, err := rd.Next()
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if e.Record != nil && e.Record.Item.ID == id {
			return e.Record
		}
	}
}

// TestDownlevelCoversWhatTheViewGained: below full, none of the free text
// the view gained for show (a permission's command, a refused prompt's
// message, a compaction's error, links' names and URIs, a move's source,
// a terminal's cwd) is left as it was; at none, no path is left.
func TestDownlevelCoversWhatTheViewGained(t *testing.T) {
	for _, l := range []aep.Level{aep.Metadata, aep.None} {
		f, err := os.Open("testdata/every-field.asr.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		v, err := Build(f, Options{WithJSON: true})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		Downlevel(v, l, aep.Redactor{})
		b, _ := json.Marshal(v)
		leaks := []string{`rm -rf`, `"bad"`, `{"m":"x"}`, `file:///x`, `"n"`, `careful`, `boom`}
		if l == aep.None {
			leaks = append(leaks, `a.go`, `root1:sub`, `root1:z`, `x.go`)
		}
		for _, s := range leaks {
			if strings.Contains(string(b), s) {
				t.Errorf("%s: %s is left in the view", l, s)
			}
		}
	}
}

// TestWindowEndsAtABadRecord: a record whose body cannot be read right
// after a full window starts the next window (its problem is reported
// there, once).
func TestWindowEndsAtABadRecord(t *testing.T) {
	const stream = `{"type":"header","asr":"0.1","sessionId":"s1","producer":{"method":"recorder","name":"x","lossy":[]}}
{"type":"state","seq":1,"id":"r1","state":"running"}
{"type":"message","seq":2,"id":"r2","messageId":"m","content":"not a list"}
{"type":"state","seq":3,"id":"r3","state":"idle"}
`
	v, err := Build(strings.NewReader(stream), Options{Limit: 1})
	if err != nil || v.Next != 2 || len(v.Problems) != 0 || len(v.Items) != 1 {
		t.Fatalf("first window: next %d, problems %q, %d items, %v", v.Next, v.Problems, len(v.Items), err)
	}
	v, err = Build(strings.NewReader(stream), Options{From: 2, Limit: 1})
	if err != nil || v.Next != 0 || len(v.Problems) != 1 || !strings.HasPrefix(v.Problems[0], "line 3: message record:") || len(v.Items) != 1 {
		t.Fatalf("second window: next %d, problems %q, %d items, %v", v.Next, v.Problems, len(v.Items), err)
	}
}
