package asrcheck

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acptap/acptap/sdk/asr"
	"github.com/acptap/acptap/sdk/asr/internal/asrtest"
)

// The base stream and its edits are asrtest's, shared with the asr tests.
const (
	hdrACP     = asrtest.HdrACP
	recState1  = asrtest.RecState1
	recPrompt  = asrtest.RecPrompt
	recDecl    = asrtest.RecDecl
	recCall    = asrtest.RecCall
	recResult  = asrtest.RecResult
	recAnswer  = asrtest.RecAnswer
	recRevised = asrtest.RecRevised
	recIdle    = asrtest.RecIdle
)

func baseLines() []string { return asrtest.BaseLines() }

// edit is an asrtest.Edit, spelled {line, text} in the tables below.
type edit asrtest.Edit

var streamWith = asrtest.StreamWith[edit]

func validateString(t *testing.T, s string) (Summary, []Problem) {
	t.Helper()
	var got []Problem
	sum, err := Validate(strings.NewReader(s), func(p Problem) { got = append(got, p) })
	if err != nil {
		t.Fatal(err)
	}
	return sum, got
}

func e(line int, msg string) Problem {
	return Problem{Line: line, Severity: SeverityError, Message: msg}
}
func w(line int, msg string) Problem {
	return Problem{Line: line, Severity: SeverityWarning, Message: msg}
}

func TestValidateBaseStreamIsValid(t *testing.T) {
	sum, probs := validateString(t, streamWith())
	if len(probs) != 0 {
		t.Fatalf("problems: %v", probs)
	}
	want := Summary{SessionID: "s1", Lines: 9, Records: 8, Entities: 4,
		Types: map[string]int{"state": 2, "message": 3, "declaration": 1, "tool_call": 1, "tool_result": 1},
		Lossy: []string{asr.LossToolStatus, "inference", "message.author", "timestamps", "tool_result.content", "usage"}}
	if diff := cmp.Diff(want, sum); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	if !sum.Valid() {
		t.Error("not Valid")
	}
}

// TestValidateInvariants violates each invariant once and checks the
// exact problems: line, severity and message.
func TestValidateInvariants(t *testing.T) {
	hdr := func(old, new string) string {
		if !strings.Contains(hdrACP, old) {
			panic(old)
		}
		return strings.Replace(hdrACP, old, new, 1)
	}
	lineage := func(l string) string { return hdr(`"workspace"`, `"lineage":`+l+`,"workspace"`) }
	fork := lineage(`{"forkedFrom":{"session":"p","evidence":"native_field"},"inherits":{"mode":"copied","from":"p","evidence":"native_field"}}`)
	tests := []struct {
		name   string
		stream string
		want   []Problem
	}{
		// Header first.
		{"no header", streamWith(edit{1, ""}),
			[]Problem{e(1, `line 1 must be the header ("type":"header"), found type "state"`)}},
		{"second header", streamWith(edit{9, "+" + hdrACP}),
			[]Problem{e(10, "a second header: the header is line 1 only, every later line is a record")}},
		{"empty stream", "", []Problem{e(0, "empty stream: no header line")}},

		// seq dense, id = r<seq> and unique.
		{"seq gap", streamWith(edit{2, ""}),
			[]Problem{e(2, "seq 2, expected 1: seq is dense from 1 in line order (the header is 0)")}},
		{"seq repeated", streamWith(edit{9, "+" + recIdle}),
			[]Problem{
				e(10, "seq 8, expected 9: seq is dense from 1 in line order (the header is 0)"),
				e(10, `id "r8" is already used by an earlier record`),
			}},
		{"id not r<seq>", streamWith(edit{9, strings.Replace(recIdle, `"id":"r8"`, `"id":"r9"`, 1)}),
			[]Problem{e(9, `id "r9" does not match seq 8: a record's id is "r<seq>" (r8)`)}},
		{"id reused", streamWith(edit{9, strings.Replace(recIdle, `"id":"r8"`, `"id":"r2"`, 1)}),
			[]Problem{
				e(9, `id "r2" does not match seq 8: a record's id is "r<seq>" (r8)`),
				e(9, `id "r2" is already used by an earlier record`),
			}},

		// supersedes points back to the latest record of the same entity.
		{"supersedes a later record", streamWith(edit{8, strings.Replace(recRevised, `"supersedes":"r6"`, `"supersedes":"r8"`, 1)}),
			[]Problem{e(8, "supersedes r8, which is not an earlier record (this is r7)")}},
		{"supersedes another entity", streamWith(edit{8, strings.Replace(recRevised, `"supersedes":"r6"`, `"supersedes":"r2"`, 1)}),
			[]Problem{e(8, `supersedes r2, but the latest record of message "m2" is r6 (first r6)`)}},
		{"revision without supersedes", streamWith(edit{8, strings.Replace(recRevised, `"supersedes":"r6",`, ``, 1)}),
			[]Problem{e(8, `message "m2" already has record r6: a later record of the same entity must carry supersedes (ASR-706)`)}},
		{"supersedes with no earlier record", streamWith(edit{7, strings.Replace(recAnswer, `"id":"r6",`, `"id":"r6","supersedes":"r2",`, 1)}),
			[]Problem{e(7, `supersedes r2, but there is no earlier record of message "m2" to revise`)}},
		{"tool_result is its own type", streamWith(edit{6, strings.Replace(recResult, `"id":"r5",`, `"id":"r5","supersedes":"r4",`, 1)}),
			[]Problem{e(6, `supersedes r4, but there is no earlier record of tool_result "c1" to revise`)}},
		{"supersedes on a snapshot", streamWith(edit{9, strings.Replace(recIdle, `"id":"r8",`, `"id":"r8","supersedes":"r1",`, 1)}),
			[]Problem{e(9, "supersedes on a state record: state records are snapshots, not revisions of an entity")}},
		{"file_change revises a file_change", streamWith(edit{9, `+{"type":"file_change","seq":9,"id":"r9","supersedes":"r1","status":"applied","changes":[{"op":"modify","path":{"root":"root0","path":"a.go"}}]}`}),
			[]Problem{e(10, "supersedes r1, which is not an earlier file_change record")}},
		{"file_change revision", streamWith(edit{9, `+{"type":"file_change","seq":9,"id":"r9","status":"proposed","changes":[{"op":"modify","path":{"root":"root0","path":"a.go"}}]}`},
			edit{9, `+{"type":"file_change","seq":10,"id":"r10","supersedes":"r9","status":"applied","changes":[{"op":"modify","path":{"root":"root0","path":"a.go"}}]}`}),
			nil},

		// LF after every line.
		{"uncommitted tail", strings.TrimSuffix(streamWith(), "\n"),
			[]Problem{w(9, fmt.Sprintf("uncommitted tail: %d bytes after the last LF are not a record (an interrupted write: readers skip it, the writer truncates it on reopen)", len(recIdle)))}},
		{"CR LF", strings.Replace(streamWith(), recIdle+"\n", recIdle+"\r\n", 1),
			[]Problem{e(9, "line ends with CR LF: ASR lines end with LF alone")}},

		// Lines are JSON objects.
		{"not JSON", streamWith(edit{9, `{"type":"state",`}),
			[]Problem{e(9, "not JSON: unexpected EOF")}},
		{"empty line", streamWith(edit{9, "+ "}),
			[]Problem{e(10, "empty line: every line is one JSON object")}},
		{"not an object", streamWith(edit{9, "+[1]"}),
			[]Problem{e(10, "not a JSON object: every line is one JSON object")}},
		{"not UTF-8", streamWith(edit{9, strings.Replace(recIdle, "end_turn", "end\xfe", 1)}),
			[]Problem{e(9, "not valid UTF-8")}},

		// Lineage.
		{"fork", streamWith(edit{1, fork}), nil},
		{"inherits from another session", streamWith(edit{1, lineage(`{"forkedFrom":{"session":"p","evidence":"native_field"},"inherits":{"mode":"copied","from":"q","evidence":"native_field"}}`)}),
			[]Problem{e(1, `lineage.inherits.from "q" differs from lineage.forkedFrom.session "p" (ASR-718)`)}},
		{"inherits without forkedFrom", streamWith(edit{1, lineage(`{"inherits":{"mode":"copied","from":"q","evidence":"native_field"}}`)}),
			[]Problem{e(1, `header: lineage: "inherits" needs "forkedFrom"`)}},
		{"forked from itself", streamWith(edit{1, lineage(`{"forkedFrom":{"session":"s1","evidence":"native_field"}}`)}),
			[]Problem{e(1, `lineage.forkedFrom.session is the stream's own sessionId "s1"`)}},
		{"spawned by itself", streamWith(edit{1, lineage(`{"spawnedBy":{"session":"s1","evidence":"native_field"}}`)}),
			[]Problem{e(1, `lineage.spawnedBy.session is the stream's own sessionId "s1"`)}},
		{"localThroughId in a fork", streamWith(edit{1, fork}, edit{9, `+{"type":"declaration","seq":9,"id":"r9","localThroughId":"r8"}`}), nil},
		{"localThroughId without a fork", streamWith(edit{9, `+{"type":"declaration","seq":9,"id":"r9","localThroughId":"r8"}`}),
			[]Problem{e(10, "localThroughId in a stream without lineage.forkedFrom: only a fork has copied history (ASR-718)")}},
		{"localThroughId ahead", streamWith(edit{1, fork}, edit{9, `+{"type":"declaration","seq":9,"id":"r9","localThroughId":"r9"}`}),
			[]Problem{e(10, "localThroughId r9 is not an earlier record")}},
		{"copiedFrom without a fork", streamWith(edit{3, strings.Replace(recPrompt, `"id":"r2",`, `"id":"r2","copiedFrom":{"session":"p","proof":"native_id"},`, 1)}),
			[]Problem{e(3, "copiedFrom in a stream without lineage.inherits: only a fork's copied history carries it (ASR-718)")}},
		{"copiedFrom another session", streamWith(edit{1, fork}, edit{3, strings.Replace(recPrompt, `"id":"r2",`, `"id":"r2","copiedFrom":{"session":"q","proof":"native_id"},`, 1)}),
			[]Problem{e(3, `copiedFrom.session "q" differs from lineage.inherits.from "p"`)}},
		{"subagent of itself", streamWith(edit{9, `+{"type":"subagent","seq":9,"id":"r9","childSession":"s1"}`}),
			[]Problem{e(10, `childSession is the stream's own sessionId "s1"`)}},

		// Declared losses (ASR-722).
		{"ACP recorder without the always-losses", streamWith(edit{1, hdr(`"inference","message.author","timestamps","usage"`, `"inference","usage"`)}),
			[]Problem{e(1, `producer.lossy lacks "message.author", "timestamps": these always apply to a stream recorded from ACP (ASR-722)`)}},
		{"tool call without tool_status_transitions", streamWith(edit{4, strings.Replace(recDecl, `"_org.agent-session.acp/tool_status_transitions",`, ``, 1)}),
			[]Problem{e(5, `tool_call r4 needs the loss category "_org.agent-session.acp/tool_status_transitions" declared before it, in producer.lossy or an earlier declaration (ASR-722)`)}},
		{"tool result without tool_result.content", streamWith(edit{4, strings.Replace(recDecl, `,"tool_result.content"`, ``, 1)}),
			[]Problem{e(6, `tool_result r5 needs the loss category "tool_result.content" declared before it, in producer.lossy or an earlier declaration (ASR-722)`)}},
		{"losses declared in the header", streamWith(edit{1, hdr(`"usage"]`, `"usage","tool_result.content","_org.agent-session.acp/tool_status_transitions"]`)},
			edit{4, `{"type":"declaration","seq":3,"id":"r3","lossy":["reasoning"]}`}), nil},
		{"declaration after the record", streamWith(edit{4, `{"type":"declaration","seq":3,"id":"r3","lossy":["reasoning"]}`},
			edit{9, `+{"type":"declaration","seq":9,"id":"r9","lossy":["_org.agent-session.acp/tool_status_transitions","tool_result.content"]}`}),
			[]Problem{
				e(5, `tool_call r4 needs the loss category "_org.agent-session.acp/tool_status_transitions" declared before it, in producer.lossy or an earlier declaration (ASR-722)`),
				e(6, `tool_result r5 needs the loss category "tool_result.content" declared before it, in producer.lossy or an earlier declaration (ASR-722)`),
			}},
		{"not from ACP: no ACP losses required", streamWith(edit{1, hdr(`"source":{"format":"acp","formatVersion":"2.0.0-alpha.9"},"lossy":["inference","message.author","timestamps","usage"]`, `"lossy":[]`)},
			edit{4, `{"type":"declaration","seq":3,"id":"r3","lossy":["reasoning"]}`}), nil},

		// References and PathRefs.
		{"compaction through a later record", streamWith(edit{9, `+{"type":"compaction","seq":9,"id":"r9","compactionId":"k","kind":"summary","status":"completed","replaces":{"throughId":"r10"}}`}),
			[]Problem{e(10, "replaces.throughId r10 is not an earlier record")}},
		{"PathRef root not declared", streamWith(edit{5, strings.Replace(recCall, `"root":"root0"`, `"root":"root1"`, 1)}),
			[]Problem{e(5, `locations[0].path: root "root1" is not a workspace root of the header`)}},
		{"PathRef escaping its root", streamWith(edit{5, strings.Replace(recCall, `"path":"a.go"`, `"path":"../b/a.go"`, 1)}),
			[]Problem{e(5, `locations[0].path: path "../b/a.go" is not a clean path relative to its root (no leading separator, no empty, "." or ".." segments)`)}},
		{"PathRef without root, relative", streamWith(edit{5, strings.Replace(recCall, `"root":"root0"`, `"root":null`, 1)}),
			[]Problem{e(5, `locations[0].path: root is null but path "a.go" is not absolute`)}},
		{"duplicate root id", streamWith(edit{1, hdr(`{"id":"root0","path":"/w/proj"}`, `{"id":"root0","path":"/w/proj"},{"id":"root0","path":"/w/lib"}`)}),
			[]Problem{e(1, `workspace.roots: root id "root0" is declared twice`)}},
		{"tool result without its call", streamWith(edit{5, `{"type":"state","seq":4,"id":"r4","state":"running"}`}),
			[]Problem{w(6, `tool_result for call "c1" has no earlier tool_call`)}},

		// Schema, per line.
		{"schema: bad enum", streamWith(edit{3, strings.Replace(recPrompt, `"role":"user"`, `"role":"robot"`, 1)}),
			[]Problem{e(3, `message record: role: "robot" is not one of "user", "assistant"`)}},
		{"schema: unknown type", streamWith(edit{9, `+{"type":"bogus","seq":9,"id":"r9"}`}),
			[]Problem{e(10, `unknown record type "bogus": not an ASR type, not an audit-only org.agent-session.acp/<kind>, not a "_"-prefixed vendor type`)}},
		{"schema: header", streamWith(edit{1, hdr(`"asr":"0.1"`, `"asr":"9"`)}),
			[]Problem{e(1, `header: asr: "9" is not "0.1"`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sum, got := validateString(t, tt.stream)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			wantErrors := 0
			for _, p := range tt.want {
				if p.Severity == SeverityError {
					wantErrors++
				}
			}
			if sum.Errors != wantErrors || sum.Valid() != (wantErrors == 0) {
				t.Errorf("summary: %d errors (valid %v), want %d", sum.Errors, sum.Valid(), wantErrors)
			}
		})
	}
}

// TestValidateACPv2Streams: streams written by the acpv2 recorder pass
// without a problem: the copies in testdata (golden streams and a demo
// session) and, read at run time, the recording engine's current golden
// files (plugins/internal/acpasr).
func TestValidateACPv2Streams(t *testing.T) {
	paths, _ := filepath.Glob("../testdata/*.asr.jsonl")
	golden, _ := filepath.Glob("../../../plugins/internal/acpasr/testdata/*.golden.jsonl")
	if len(paths) < 3 {
		t.Fatalf("testdata streams: %v", paths)
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			sum, probs := validateString(t, string(b))
			if len(probs) != 0 || !sum.Valid() || sum.Records == 0 {
				t.Errorf("%d records, problems: %v", sum.Records, probs)
			}
		})
	}
	for _, p := range golden {
		for session, stream := range goldenStreams(t, p) {
			if !strings.HasPrefix(stream, `{"type":"header"`) {
				// Records appended to a stream the test gave as prior
				// state: not a stream on their own.
				t.Logf("%s/%s: continues a prior stream; skipped", filepath.Base(p), session)
				continue
			}
			t.Run("acpv2/"+filepath.Base(p)+"/"+session, func(t *testing.T) {
				sum, probs := validateString(t, stream)
				if len(probs) != 0 || !sum.Valid() {
					t.Errorf("problems: %v", probs)
				}
			})
		}
	}
}

// goldenStreams extracts the ASR stream of each session from an acpv2
// golden file ({"kind":"asr-header"|"asr-record","session":…,"json":…}).
func goldenStreams(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var o struct {
			Kind    string          `json:"kind"`
			Session string          `json:"session"`
			JSON    json.RawMessage `json:"json"`
		}
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if o.Kind == "asr-header" || o.Kind == "asr-record" {
			out[o.Session] += string(o.JSON) + "\n"
		}
	}
	return out
}

// TestValidateStreams reads a long stream through a pipe: records arrive
// one at a time, and the state kept is per entity (many revisions of a
// few entities keep it small).
func TestValidateStreams(t *testing.T) {
	const n = 20000
	pr, pw := io.Pipe()
	go func() {
		bw := bufio.NewWriter(pw)
		fmt.Fprintln(bw, hdrACP)
		for i := 1; i <= n; i++ {
			sup := ""
			if i > 1 {
				sup = fmt.Sprintf(`"supersedes":"r%d",`, i-1)
			}
			fmt.Fprintf(bw, `{"type":"plan","seq":%d,"id":"r%d",%s"planId":"p","entries":[{"content":"%s","priority":"high","status":"pending"}]}`+"\n",
				i, i, sup, strings.Repeat("x", 200))
		}
		bw.Flush()
		pw.Close()
	}()
	var v *validator
	cs, err := compiled()
	if err != nil {
		t.Fatal(err)
	}
	v = newValidator(cs, func(p Problem) { t.Error(p) })
	rd := asr.NewReader(pr)
	for {
		line, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		v.line(rd.Line(), line)
	}
	sum := v.finish()
	if sum.Records != n || sum.Entities != 1 || len(v.rules.entities) != 1 || len(v.rules.chains) != 0 {
		t.Errorf("records %d, entities %d, kept %d+%d", sum.Records, sum.Entities, len(v.rules.entities), len(v.rules.chains))
	}
}

type failingReader struct{ n int }

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n == 0 {
		f.n++
		return copy(p, hdrACP+"\n"), nil
	}
	return 0, errors.New("disk on fire")
}

func TestValidateReadError(t *testing.T) {
	_, err := Validate(&failingReader{}, nil)
	if err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("err = %v", err)
	}
}

func TestProblemString(t *testing.T) {
	for _, tt := range []struct {
		p    Problem
		want string
	}{
		{e(3, "bad"), "line 3: bad"},
		{w(4, "meh"), "line 4: warning: meh"},
		{e(0, "empty"), "empty"},
	} {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.p, got, tt.want)
		}
	}
}
