package asr

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acptap/acptap/sdk/asr/internal/asrtest"
)

// viewEntry is an Entity without its line, for comparisons.
// The base stream and its edits are asrtest's, shared with the validator's tests.
const (
	hdrACP    = asrtest.HdrACP
	recState1 = asrtest.RecState1
)

// edit is an asrtest.Edit, spelled {line, text} in the tables below.
type edit asrtest.Edit

var streamWith = asrtest.StreamWith[edit]

type viewEntry struct {
	Type, Key, First, Latest string
	Revisions                int
}

func entries(es []Entity) []viewEntry {
	out := make([]viewEntry, len(es))
	for i, e := range es {
		out[i] = viewEntry{e.Type, e.Key, e.First, e.Latest.ID, e.Revisions}
	}
	return out
}

func TestContextView(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		want   []viewEntry
	}{
		{"base stream", streamWith(), []viewEntry{
			{"message", "m1", "r2", "r2", 1},
			{"tool_call", "c1", "r4", "r4", 1},
			{"tool_result", "c1", "r5", "r5", 1},
			{"message", "m2", "r6", "r7", 2},
		}},
		{"leaves out notices, audit-only, vendor and snapshot records", streamWith(
			edit{9, `+{"type":"message","seq":9,"id":"r9","messageId":"n","origin":"notice","content":[{"type":"text","text":"hi"}]}`},
			edit{9, `+{"type":"org.agent-session.acp/available_commands_update","seq":10,"id":"r10","native":{"record":{}}}`},
			edit{9, `+{"type":"_acme/x","seq":11,"id":"r11"}`},
			edit{9, `+{"type":"permission","seq":12,"id":"r12","requestId":"0:0","status":"pending"}`},
		), []viewEntry{
			{"message", "m1", "r2", "r2", 1},
			{"tool_call", "c1", "r4", "r4", 1},
			{"tool_result", "c1", "r5", "r5", 1},
			{"message", "m2", "r6", "r7", 2},
		}},
		{"every context type; file_change revisions follow supersedes", strings.Join([]string{
			hdrACP,
			`{"type":"plan","seq":1,"id":"r1","planId":"p","entries":[]}`,
			`{"type":"file_change","seq":2,"id":"r2","status":"proposed","changes":[{"op":"add","path":{"root":"root0","path":"a"}}]}`,
			`{"type":"terminal","seq":3,"id":"r3","status":"running","terminalId":"t"}`,
			`{"type":"file_change","seq":4,"id":"r4","status":"applied","changes":[{"op":"add","path":{"root":"root0","path":"b"}}]}`,
			`{"type":"compaction","seq":5,"id":"r5","status":"completed","compactionId":"k","kind":"summary"}`,
			`{"type":"file_change","seq":6,"id":"r6","supersedes":"r2","status":"applied","changes":[{"op":"add","path":{"root":"root0","path":"a"}}]}`,
			`{"type":"plan","seq":7,"id":"r7","supersedes":"r1","planId":"p","entries":[{"content":"x","priority":"low","status":"pending"}]}`,
			`{"type":"terminal","seq":8,"id":"r8","supersedes":"r3","status":"exited","terminalId":"t"}`,
		}, "\n") + "\n", []viewEntry{
			{"plan", "p", "r1", "r7", 2},
			{"file_change", "r2", "r2", "r6", 2},
			{"terminal", "t", "r3", "r8", 2},
			{"file_change", "r4", "r4", "r4", 1},
			{"compaction", "k", "r5", "r5", 1},
		}},
		{"a tail is not a record", streamWith() + `{"type":"message","seq":9,"id":"r9","messageId":"m3","role":"user","content":[]}`, []viewEntry{
			{"message", "m1", "r2", "r2", 1},
			{"tool_call", "c1", "r4", "r4", 1},
			{"tool_result", "c1", "r5", "r5", 1},
			{"message", "m2", "r6", "r7", 2},
		}},
		{"header only", hdrACP + "\n", []viewEntry{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ContextView(strings.NewReader(tt.stream))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, entries(got)); diff != "" {
				t.Errorf("view (-want +got):\n%s", diff)
			}
		})
	}
}

// TestContextViewGolden: the acpv2 golden stream's view, and the latest
// revision decoded into the model.
func TestContextViewGolden(t *testing.T) {
	f, err := os.Open("testdata/acpv2-full.asr.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := ContextView(f)
	if err != nil {
		t.Fatal(err)
	}
	want := []viewEntry{
		{"message", "user-1", "r4", "r4", 1},
		{"plan", "plan-1", "r5", "r19", 2},
		{"tool_call", "call-mv", "r7", "r7", 1},
		{"file_change", "r12", "r12", "r12", 1},
		{"tool_result", "call-mv", "r13", "r13", 1},
		{"tool_call", "call-test", "r14", "r14", 1},
		{"tool_result", "call-test", "r15", "r15", 1},
		{"terminal", "term-1", "r20", "r20", 1},
		{"message", "asst-1", "r21", "r26", 2},
		{"message", "user-2", "r24", "r24", 1},
		{"compaction", "cmp-1", "r25", "r25", 1},
	}
	if diff := cmp.Diff(want, entries(got)); diff != "" {
		t.Errorf("view (-want +got):\n%s", diff)
	}
	var m Message
	if err := got[8].Decode(&m); err != nil {
		t.Fatal(err)
	}
	if m.Supersedes != "r21" || len(m.Content) != 1 || !strings.Contains(string(m.Content[0]), "(revised)") {
		t.Errorf("latest asst-1: %+v", m)
	}
}

func TestContextViewErrors(t *testing.T) {
	tests := []struct {
		name, stream, want string
	}{
		{"empty", "", "empty stream"},
		{"no header", recState1 + "\n", "line 1: asr: first line is not a header"},
		{"not JSON", hdrACP + "\n{\n", "line 2: asr: record"},
		{"no key", hdrACP + "\n" + `{"type":"message","seq":1,"id":"r1","role":"user","content":[]}` + "\n", "line 2: message record without a string messageId"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ContextView(strings.NewReader(tt.stream))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if tt.name == "empty" && !errors.Is(err, ErrNotHeader) {
				t.Errorf("not ErrNotHeader: %v", err)
			}
		})
	}
}

// TestContextViewEmptyKey: an empty key is a key (the schema allows it:
// ACP does not forbid an empty id); its revisions join as any other's.
func TestContextViewEmptyKey(t *testing.T) {
	stream := hdrACP + "\n" +
		`{"type":"message","seq":1,"id":"r1","ts":"2026-10-26T14:30:41.211Z","tsSource":"recorder","messageId":"","role":"user","content":[]}` + "\n" +
		`{"type":"message","seq":2,"id":"r2","ts":"2026-10-26T14:30:41.211Z","tsSource":"recorder","supersedes":"r1","messageId":"","role":"user","content":[{"type":"text","text":"x"}]}` + "\n"
	view, err := ContextView(strings.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]viewEntry{{"message", "", "r1", "r2", 2}}, entries(view)); diff != "" {
		t.Errorf("view (-want +got):\n%s", diff)
	}
}
