package logimport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/acptap/acptap/host/builtin"
	"github.com/acptap/acptap/host/pipeline"
	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/aep"
	"github.com/acptap/acptap/sdk/aep/aepcheck"
	"github.com/google/go-cmp/cmp"
)

// inProcess launches the built-in plugins in this process.
func inProcess(_ context.Context, name string) (*pipeline.Plugin, error) {
	f, ok := builtin.Factories()[name]
	if !ok {
		return nil, fmt.Errorf("no built-in plugin %q", name)
	}
	m := f()
	info, err := m.Info(context.Background())
	if err != nil {
		return nil, err
	}
	return &pipeline.Plugin{Name: name, Info: info, Mapper: m}, nil
}

// builtinRevision is the default "acp-v1-log" entry, kept to the plugins
// built in (as the config does).
func builtinRevision() []string {
	var names []string
	for _, n := range []string{"acpv1", "aep"} {
		if _, ok := builtin.Factories()[n]; ok {
			names = append(names, n)
		}
	}
	return names
}

func testOptions(t *testing.T, root string) Options {
	t.Helper()
	st, err := store.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	return Options{Store: st, From: FromACPv1Log, Pipeline: pipeline.Options{
		Revisions: map[string][]string{FromACPv1Log: builtinRevision()}, Launch: inProcess,
	}}
}

func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func convert(t *testing.T, input string, opts Options) *Result {
	t.Helper()
	res, err := Convert(context.Background(), input, opts)
	if err != nil {
		t.Fatalf("Convert(%s): %v", input, err)
	}
	if res.MappingErr != nil {
		t.Fatalf("Convert(%s): mapping: %v", input, res.MappingErr)
	}
	return res
}

// checkAEP validates every event of an AEP log (schemas and stream rules)
// and returns the events' types.
func checkAEP(t *testing.T, path string) map[string]int {
	t.Helper()
	v, err := aepcheck.DefaultValidator()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s aep.Stream
	types := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		h, err := v.Validate(sc.Bytes())
		if err != nil {
			t.Errorf("%s:%d: %v", path, n, err)
			continue
		}
		canon, _ := aep.CanonicalRaw(sc.Bytes())
		if err := s.Admit(h, canon); err != nil {
			t.Errorf("%s:%d: %v", path, n, err)
		}
		var e struct{ Type string }
		json.Unmarshal(sc.Bytes(), &e)
		types[e.Type]++
	}
	if len(types) == 0 {
		t.Errorf("%s: no events", path)
	}
	return types
}

// TestConvertTraceWritesWireLogAndAEP: the SDK trace becomes a wire log
// named after its hash, whose header names the source, and valid AEP
// events for its session.
func TestConvertTraceWritesWireLogAndAEP(t *testing.T) {
	root := t.TempDir()
	opts := testOptions(t, root)
	b, _ := os.ReadFile(sdkTrace)
	input := writeFile(t, t.TempDir(), "trace.jsonl", b)
	res := convert(t, input, opts)
	sum, _, _ := hashFile(input)
	if res.Connection != Connection(sum) || !strings.HasPrefix(res.Connection, "v1-") || len(res.Connection) != 15 {
		t.Errorf("connection %q", res.Connection)
	}
	if res.Frames() != 50 || res.FramesC2A != 13 || res.SkippedLines != 0 || res.Times[TimeSynthetic] != 50 {
		t.Errorf("frames %d (c2a %d), skipped %d, times %v", res.Frames(), res.FramesC2A, res.SkippedLines, res.Times)
	}
	if diff := cmp.Diff([]string{"sdk-v1-session-1"}, res.Sessions); diff != "" {
		t.Errorf("sessions: %s", diff)
	}
	if res.Revision != FromACPv1Log {
		t.Errorf("revision %q", res.Revision)
	}
	r, err := wire.Open(res.WirePath)
	if err != nil {
		t.Fatal(err)
	}
	hdr := r.Header()
	want := wire.Source{Mode: "convert", From: "acp-v1-log", Format: "trace", Path: input, SHA256: fmt.Sprintf("%x", sum),
		FramesSHA256: res.Source.FramesSHA256}
	if len(want.FramesSHA256) != 64 {
		t.Errorf("framesSha256 %q", want.FramesSHA256)
	}
	if hdr.Source == nil || *hdr.Source != want || !hdr.StartedAt.IsZero() || hdr.Connection != res.Connection {
		t.Errorf("header %+v source %+v", hdr, hdr.Source)
	}
	var kinds []string
	for {
		e, err := r.Next()
		if err != nil {
			break
		}
		kinds = append(kinds, e.Type)
		if e.Type == wire.TypeFrame && !IsSynthetic(e.At) {
			t.Errorf("seq %d: at %v is not synthetic", e.Seq, e.At)
		}
		if e.Type == wire.TypeFrame && bytes.Contains(e.Line, []byte("SECRET-")) {
			t.Errorf("seq %d: MCP secrets not scrubbed: %s", e.Seq, e.Line)
		}
	}
	r.Close()
	if len(kinds) != 51 || kinds[3] != wire.TypeSession {
		t.Errorf("entries %v", kinds)
	}
	types := checkAEP(t, opts.Store.AEPPath("sdk-v1-session-1"))
	if diff := cmp.Diff(types, res.AEPTypes); diff != "" {
		t.Errorf("AEP counts (-file +result):\n%s", diff)
	}
	for typ, n := range map[string]int{"session.started": 1, "run.started": 2, "run.finished": 2, "tool.requested": 2,
		"tool.completed": 2, "attention.requested": 2, "session.ended": 1} {
		if types[typ] != n {
			t.Errorf("%d %s, want %d (all: %v)", types[typ], typ, n, types)
		}
	}
	if _, err := os.Stat(opts.Store.StreamPath("sdk-v1-session-1")); hasACPv1() != (err == nil) {
		t.Errorf("ASR stream: %v (acpv1 built in: %v)", err, hasACPv1())
	}
}

func hasACPv1() bool {
	_, ok := builtin.Factories()["acpv1"]
	return ok
}

// TestConvertAgainIsIdempotent: converting the same file again changes
// nothing; --force converts it again into the same bytes, keeping the old
// files aside, and does not count the sessions' connections twice.
func TestConvertAgainIsIdempotent(t *testing.T) {
	root := t.TempDir()
	opts := testOptions(t, root)
	b, _ := os.ReadFile(sdkTrace)
	input := writeFile(t, t.TempDir(), "trace.jsonl.gz", gz(t, b))
	first := convert(t, input, opts)
	if first.Source.Gzip != true || first.Source.Format != "trace" {
		t.Errorf("source %+v", first.Source)
	}
	snapshot := func() map[string]string {
		m := map[string]string{}
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !strings.Contains(p, string(filepath.Separator)+"logs"+string(filepath.Separator)) {
				b, _ := os.ReadFile(p)
				rel, _ := filepath.Rel(root, p)
				m[rel] = string(b)
			}
			return nil
		})
		return m
	}
	before := snapshot()
	again, err := Convert(context.Background(), input, opts)
	if err != nil || !again.Existed || again.WirePath != first.WirePath || again.Frames() != 0 {
		t.Fatalf("second conversion: %+v, %v", again, err)
	}
	if diff := cmp.Diff(before, snapshot()); diff != "" {
		t.Errorf("the store changed (-before +after):\n%s", diff)
	}

	opts.Force = true
	forced := convert(t, input, opts)
	if forced.Existed || forced.Frames() != first.Frames() {
		t.Errorf("forced: %+v", forced)
	}
	after := snapshot()
	var prev []string
	for rel, content := range after {
		if i := strings.Index(rel, ".prev-"); i >= 0 {
			prev = append(prev, rel[:i])
			if before[rel[:i]] != content {
				t.Errorf("%s is not the old %s", rel, rel[:i])
			}
			delete(after, rel)
		}
	}
	sort.Strings(prev)
	// The forced conversion rewrote the same bytes: no .prev- copy is kept
	// (one is kept only when a file changed).
	var wantPrev []string
	if diff := cmp.Diff(wantPrev, prev); diff != "" {
		t.Errorf("moved aside (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("--force wrote different files (-first +forced):\n%s", diff)
	}
	if len(forced.Replaced) != len(prev) {
		t.Errorf("Replaced %v", forced.Replaced)
	}
}

// TestConvertManySessions: one file of frames from three interleaved
// sessions (with junk lines) gives three sessions, each with its own valid
// AEP log; the junk is reported, not fatal.
func TestConvertManySessions(t *testing.T) {
	root := t.TempDir()
	opts := testOptions(t, root)
	var in strings.Builder
	fmt.Fprintln(&in, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
	fmt.Fprintln(&in, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`)
	for i := 1; i <= 3; i++ {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`+"\n", i)
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"result":{"sessionId":"s%d"}}`+"\n", i, i)
	}
	fmt.Fprintln(&in, "garbage")
	for i := 1; i <= 3; i++ {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"s%d","prompt":[{"type":"text","text":"hi"}]}}`+"\n", 10+i, i)
	}
	for i := 1; i <= 3; i++ {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s%d","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hello %d"}}}}`+"\n", i, i)
	}
	for i := 3; i >= 1; i-- {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"result":{"stopReason":"end_turn"}}`+"\n", 10+i)
	}
	input := writeFile(t, t.TempDir(), "frames.jsonl", []byte(in.String()))
	res := convert(t, input, opts)
	if diff := cmp.Diff([]string{"s1", "s2", "s3"}, res.Sessions); diff != "" {
		t.Errorf("sessions: %s", diff)
	}
	if res.SkippedLines != 1 || len(res.SkipExamples) != 1 || res.SkipExamples[0] != (Skip{9, "not JSON"}) {
		t.Errorf("skips %d %v", res.SkippedLines, res.SkipExamples)
	}
	for i := 1; i <= 3; i++ {
		types := checkAEP(t, opts.Store.AEPPath(fmt.Sprintf("s%d", i)))
		if types["run.started"] != 1 || types["run.finished"] != 1 {
			t.Errorf("s%d: %v", i, types)
		}
	}
}

// TestConvertUpdatesAndStdin: bare update params read from standard input
// convert; the header says "-".
func TestConvertUpdatesAndStdin(t *testing.T) {
	root := t.TempDir()
	opts := testOptions(t, root)
	in := `{"sessionId":"u1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a"}}}
{"sessionId":"u1","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Read","kind":"read","status":"pending"}}
{"sessionId":"u1","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed"}}
`
	opts.Stdin = strings.NewReader(in)
	res := convert(t, "-", opts)
	if res.Source.Path != "-" || res.Source.Format != "updates" || res.Synthesized != 2 || res.FramesA2C != 4 {
		t.Errorf("%+v", res)
	}
	if entries, _ := os.ReadDir(filepath.Join(root, "tmp")); len(entries) != 0 {
		t.Errorf("spool left behind: %v", entries)
	}
	checkAEP(t, opts.Store.AEPPath("u1"))
}

// TestConvertRefusals: a missing file, a v2 log and a file without ACP
// lines are not converted (and leave no wire log).
func TestConvertRefusals(t *testing.T) {
	root := t.TempDir()
	opts := testOptions(t, root)
	dir := t.TempDir()
	v2 := writeFile(t, dir, "v2.jsonl", []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2}}`+"\n"+
		`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2}}`+"\n"))
	junk := writeFile(t, dir, "junk.txt", []byte("hello\nworld\n"))
	for _, c := range []struct{ input, want string }{
		{filepath.Join(dir, "missing.jsonl"), "no such file"},
		{v2, "not an ACP v1 log"},
		{junk, "nothing to convert"},
		{dir, "is a directory"},
	} {
		_, err := Convert(context.Background(), c.input, opts)
		if !errors.Is(err, ErrNotReadable) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.input, err)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(root, "wire")); len(entries) != 0 {
		t.Errorf("wire logs written: %v", entries)
	}

	// A wire log under this input's name that another input made.
	b, _ := os.ReadFile(sdkTrace)
	input := writeFile(t, dir, "trace.jsonl", b)
	sum, _, _ := hashFile(input)
	w, err := opts.Store.CreateWire(Connection(sum), wire.Header{Source: &wire.Source{Mode: "convert", SHA256: "00"}})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if _, err := Convert(context.Background(), input, opts); err == nil || !strings.Contains(err.Error(), "was not converted from this input") {
		t.Errorf("collision: %v", err)
	}
}

// TestConvertWireLogOfThisStore: a wire log this store recorded is mapped
// again by rebuild, not converted into a second connection.
func TestConvertWireLogOfThisStore(t *testing.T) {
	root := t.TempDir()
	opts := testOptions(t, root)
	w, err := opts.Store.CreateWire("c-1", wire.Header{})
	if err != nil {
		t.Fatal(err)
	}
	w.Append(wire.Entry{Type: wire.TypeFrame, Dir: sdk.C2A, Line: []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)})
	w.Close()
	_, err = Convert(context.Background(), opts.Store.WirePath("c-1"), opts)
	if err == nil || !strings.Contains(err.Error(), "acptap rebuild") {
		t.Errorf("err %v", err)
	}
	b, _ := os.ReadFile(opts.Store.WirePath("c-1"))
	other := testOptions(t, t.TempDir())
	res := convert(t, writeFile(t, t.TempDir(), "c-1.jsonl", b), other)
	if res.Source.Format != "wire" || res.FramesC2A != 1 || res.Times[TimeReceived] != 0 {
		t.Errorf("%+v", res)
	}
}

// TestConvertInterrupted: a conversion cancelled before it starts writes
// nothing, so the input is not "already converted" afterwards.
func TestConvertInterrupted(t *testing.T) {
	root := t.TempDir()
	opts := testOptions(t, root)
	b, _ := os.ReadFile(sdkTrace)
	input := writeFile(t, t.TempDir(), "trace.jsonl", b)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Convert(ctx, input, opts)
	if err != nil || !res.Interrupted || res.Wrote {
		t.Fatalf("%+v, %v", res, err)
	}
	if _, err := os.Stat(res.WirePath); err == nil {
		t.Error("a wire log was written")
	}
	if res := convert(t, input, opts); res.Existed || res.Frames() != 50 {
		t.Errorf("after the interruption: %+v", res)
	}
}

// TestConvertIdempotentByContent: the same frames in another container —
// the plain file of a gzip converted before, or its frames as JSON-RPC
// lines instead of a trace — are recognised by their frames' digest and
// not converted a second time; other frames are.
func TestConvertIdempotentByContent(t *testing.T) {
	root := t.TempDir()
	opts := testOptions(t, root)
	b, _ := os.ReadFile(sdkTrace)
	dir := t.TempDir()
	first := convert(t, writeFile(t, dir, "trace.jsonl.gz", gz(t, b)), opts)
	if first.Source.FramesSHA256 == "" || first.Frames() == 0 {
		t.Fatalf("first: %+v", first)
	}
	plain, err := Convert(context.Background(), writeFile(t, dir, "trace.jsonl", b), opts)
	if err != nil || !plain.Existed || plain.WirePath != first.WirePath {
		t.Errorf("the plain file of a converted gzip: %+v, %v", plain, err)
	}
	// The same frames as JSON-RPC lines (directions from the messages).
	var frames strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var tl struct {
			Line string `json:"line"`
		}
		if json.Unmarshal([]byte(l), &tl) == nil && tl.Line != "" {
			frames.WriteString(tl.Line + "\n")
		}
	}
	other, err := Convert(context.Background(), writeFile(t, dir, "frames.jsonl", []byte(frames.String())), opts)
	if err != nil {
		t.Fatal(err)
	}
	if other.Source.FramesSHA256 == first.Source.FramesSHA256 && (!other.Existed || other.WirePath != first.WirePath) {
		t.Errorf("the same frames in another layout were converted again: %+v", other)
	}
	t.Logf("frames layout: same digest %v, existed %v", other.Source.FramesSHA256 == first.Source.FramesSHA256, other.Existed)
	logs, _ := filepath.Glob(filepath.Join(root, "wire", "*.jsonl"))
	if other.Source.FramesSHA256 == first.Source.FramesSHA256 && len(logs) != 1 {
		t.Errorf("wire logs %v, want one", logs)
	}
	changed := convert(t, writeFile(t, dir, "fewer.jsonl", []byte(strings.SplitAfterN(string(b), "\n", 3)[0]+strings.SplitAfterN(string(b), "\n", 3)[1])), opts)
	if changed.Existed || changed.WirePath == first.WirePath {
		t.Errorf("other frames were taken for the same: %+v", changed)
	}
}
