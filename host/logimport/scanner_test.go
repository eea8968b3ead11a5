package logimport

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/host/captured"
	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/internal/testpeers"
	"github.com/acptap/acptap/sdk"
	"github.com/google/go-cmp/cmp"
)

// sdkTrace is a trace written by the official npm SDK's v1 client talking
// to its v1 agent (testdata/sdk: node v1-client.mjs --trace FILE -- node
// v1-agent.mjs): 50 wire lines, both sides numbering requests from 0.
const sdkTrace = "testdata/sdk-v1-trace.jsonl"

type traceLine struct {
	Dir  string `json:"dir"`
	Line string `json:"line"`
}

func readTrace(t *testing.T) []traceLine {
	t.Helper()
	b, err := os.ReadFile(sdkTrace)
	if err != nil {
		t.Fatal(err)
	}
	var out []traceLine
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var tl traceLine
		if err := json.Unmarshal([]byte(l), &tl); err != nil {
			t.Fatal(err)
		}
		out = append(out, tl)
	}
	return out
}

func dirOf(s string) sdk.Direction {
	if s == "send" {
		return sdk.C2A
	}
	return sdk.A2C
}

// scanAll runs a scanner over input and returns its frames and skips.
func scanAll(t *testing.T, input string, maxLine int) ([]Frame, []Skip, *Scanner) {
	t.Helper()
	r, _, err := decompress(strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	s := NewScanner(r, "", maxLine)
	var skips []Skip
	s.OnSkip = func(sk Skip) { skips = append(skips, sk) }
	var out []Frame
	for {
		f, err := s.Next()
		if errors.Is(err, io.EOF) {
			return out, skips, s
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
}

type got struct {
	Dir  string
	Line string
	In   int
	Time string
}

func summarize(frames []Frame) []got {
	var out []got
	for _, f := range frames {
		out = append(out, got{f.Item.Dir.String(), string(f.Item.Line), f.Input, f.Time.String()})
	}
	return out
}

// TestTraceInput: the SDK trace converts line for line, send → c2a and
// recv → a2c, with synthetic times (the trace records none).
func TestTraceInput(t *testing.T) {
	b, _ := os.ReadFile(sdkTrace)
	frames, skips, s := scanAll(t, string(b), DefaultMaxLine)
	if len(skips) != 0 {
		t.Fatalf("skips: %v", skips)
	}
	if s.Format() != FormatTrace {
		t.Errorf("format %q", s.Format())
	}
	var want []got
	for i, tl := range readTrace(t) {
		want = append(want, got{dirOf(tl.Dir).String(), tl.Line, i + 1, "synthetic"})
	}
	if diff := cmp.Diff(want, summarize(frames)); diff != "" {
		t.Errorf("frames (-want +got):\n%s", diff)
	}
	if at := frames[4].Item.At; !at.Equal(time.Unix(0, 5e6)) || !IsSynthetic(at) {
		t.Errorf("line 5 at %v, want the epoch + 5ms", at)
	}
}

// TestFramesInputInfersDirections: the same lines without their
// directions get the directions the trace recorded, although both SDK
// sides number their requests from 0 (ids 0–4 are pending both ways).
func TestFramesInputInfersDirections(t *testing.T) {
	var in strings.Builder
	var want []got
	for i, tl := range readTrace(t) {
		in.WriteString(tl.Line + "\n")
		want = append(want, got{dirOf(tl.Dir).String(), tl.Line, i + 1, "synthetic"})
	}
	frames, skips, s := scanAll(t, in.String(), DefaultMaxLine)
	if len(skips) != 0 {
		t.Fatalf("skips: %v", skips)
	}
	if s.Format() != FormatFrames {
		t.Errorf("format %q", s.Format())
	}
	if diff := cmp.Diff(want, summarize(frames)); diff != "" {
		t.Errorf("frames (-want +got):\n%s", diff)
	}
}

// TestUpdatesInput: bare session/update params of two sessions become
// agent → client notifications after a synthesized initialize exchange,
// marked as such; no session/new is invented. A _meta.timestamp is the
// frame's time.
func TestUpdatesInput(t *testing.T) {
	in := `{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}
{"sessionId":"s2","update":{"sessionUpdate":"plan","entries":[],"_meta":{"timestamp":"2026-01-02T03:04:05.5Z"}}}

{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"!"}}}
`
	frames, skips, s := scanAll(t, in, DefaultMaxLine)
	if len(skips) != 0 || s.Blank != 1 {
		t.Fatalf("skips %v, blank %d", skips, s.Blank)
	}
	lines := strings.Split(in, "\n")
	wrap := func(l string) string { return `{"jsonrpc":"2.0","method":"session/update","params":` + l + `}` }
	want := []got{
		{"c2a", synthesizedInit[0], 0, "synthetic"},
		{"a2c", synthesizedInit[1], 0, "synthetic"},
		{"a2c", wrap(lines[0]), 1, "synthetic"},
		{"a2c", wrap(lines[1]), 2, "source"},
		{"a2c", wrap(lines[3]), 4, "synthetic"},
	}
	if diff := cmp.Diff(want, summarize(frames)); diff != "" {
		t.Errorf("frames (-want +got):\n%s", diff)
	}
	if at := frames[3].Item.At; !at.Equal(time.Date(2026, 1, 2, 3, 4, 5, 5e8, time.UTC)) {
		t.Errorf("at %v", at)
	}
	for _, f := range frames {
		if !json.Valid(f.Item.Line) {
			t.Errorf("not JSON: %s", f.Item.Line)
		}
	}
	c, err := testpeers.NewChecker(testpeers.V1)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range frames {
		from := testpeers.Client
		if f.Item.Dir == sdk.A2C {
			from = testpeers.Agent
		}
		if err := c.Check(from, f.Item.Line); err != nil {
			t.Errorf("not valid ACP v1: %v\n%s", err, f.Item.Line)
		}
	}
}

// TestWireLogInput: an acptap wire log keeps its frames, receipt times,
// gaps and nolf; its session entries are left for the conversion to redo.
func TestWireLogInput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.jsonl")
	w, err := wire.Create(path, wire.Header{Connection: "c-1"})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 10, 0, 0, 123, time.UTC)
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`
	for _, e := range []wire.Entry{
		{Type: wire.TypeFrame, At: at, Dir: sdk.C2A, Line: []byte(init)},
		{Type: wire.TypeSession, At: at, Dir: sdk.A2C, Session: wire.Session{ID: "s1", Connections: 2, PriorLines: 9}},
		{Type: wire.TypeGap, At: at, Dir: sdk.A2C, Gap: sdk.Gap{Frames: 3, Bytes: 99, Reason: "capture queue full"}},
		{Type: wire.TypeFrame, Dir: sdk.A2C, Line: []byte("tail"), NoLF: true},
	} {
		if _, err := w.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	b, _ := os.ReadFile(path)
	frames, skips, s := scanAll(t, string(b), DefaultMaxLine)
	if len(skips) != 0 || s.Format() != FormatWire || s.WireHeader == nil || s.WireHeader.Connection != "c-1" {
		t.Fatalf("skips %v, format %q, header %+v", skips, s.Format(), s.WireHeader)
	}
	want := []Frame{
		{Item: captured.Item{Dir: sdk.C2A, At: at, Line: []byte(init)}, Input: 2, Time: TimeReceived},
		{Item: captured.Item{Dir: sdk.A2C, At: at, Gap: &captured.Gap{Frames: 3, Bytes: 99, Reason: "capture queue full"}}, Input: 4, Time: TimeReceived},
		{Item: captured.Item{Dir: sdk.A2C, At: SyntheticTime(5), Line: []byte("tail"), NoLF: true}, Input: 5, Time: TimeSynthetic},
	}
	if diff := cmp.Diff(want, frames); diff != "" {
		t.Errorf("frames (-want +got):\n%s", diff)
	}
}

// TestMalformedLinesAreCountedWithTheirNumbers: junk is skipped and named
// by line number, never fatal; so are lines of another layout than the
// file's, messages whose direction cannot be told, and lines over the limit.
func TestMalformedLinesAreCountedWithTheirNumbers(t *testing.T) {
	in := strings.Join([]string{
		`not json at all`, // 1
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`, // 2
		`{"truncated":`, // 3
		`[{"jsonrpc":"2.0","method":"session/update"}]`, // 4
		`42`,                // 5
		`{"hello":"world"}`, // 6
		`{"sessionId":"s1","update":{"sessionUpdate":"plan","entries":[]}}`, // 7
		`{"jsonrpc":"2.0","method":"_vendor/thing","params":{}}`,            // 8
		`{"jsonrpc":"2.0","id":77,"result":{}}`,                             // 9
		`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}` + "\r",    // 10 (CRLF)
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + strings.Repeat("x", 300) + `"}}}}`, // 11
		"   ", // 12
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}`, // 13, no LF
	}, "\n")
	frames, skips, s := scanAll(t, in, 200)
	wantSkips := []Skip{
		{1, "not JSON"},
		{3, "not JSON"},
		{4, "a JSON array (ACP v1 has no batches)"},
		{5, "not a JSON object"},
		{6, "not ACP: neither a JSON-RPC message, a trace entry nor session/update params"},
		{7, "a bare session/update params object in a file of JSON-RPC messages (the first ACP line decides the layout)"},
		{8, `method "_vendor/thing" is not in the ACP v1 method table: its direction is unknown`},
		{9, "a response (id 77) to no request seen earlier: its direction is unknown"},
		{11, "line of 456 bytes: longer than the 200-byte limit"},
	}
	if diff := cmp.Diff(wantSkips, skips); diff != "" {
		t.Errorf("skips (-want +got):\n%s", diff)
	}
	var lines []int
	for _, f := range frames {
		lines = append(lines, f.Input)
	}
	if diff := cmp.Diff([]int{2, 10, 13}, lines); diff != "" {
		t.Errorf("converted lines (-want +got):\n%s", diff)
	}
	if s.Lines != 13 || s.Blank != 1 || s.Skipped != len(wantSkips) {
		t.Errorf("lines %d blank %d skipped %d", s.Lines, s.Blank, s.Skipped)
	}
	if string(frames[1].Item.Line) != `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}` || frames[1].Item.Dir != sdk.A2C {
		t.Errorf("CRLF line: %s %s", frames[1].Item.Dir, frames[1].Item.Line)
	}
}

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestGzipInput: gzip is recognized by its magic bytes, whatever the name.
func TestGzipInput(t *testing.T) {
	b, _ := os.ReadFile(sdkTrace)
	plain, _, _ := scanAll(t, string(b), DefaultMaxLine)
	zipped, skips, _ := scanAll(t, string(gz(t, b)), DefaultMaxLine)
	if len(skips) != 0 {
		t.Fatal(skips)
	}
	if diff := cmp.Diff(summarize(plain), summarize(zipped)); diff != "" {
		t.Errorf("gzip differs (-plain +gzip):\n%s", diff)
	}
}

// TestResponseIDPendingBothWays: when the client's prompt and the agent's
// request share an id, the result's members say which is answered, and
// without them the later (nested) request is.
func TestResponseIDPendingBothWays(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`,
		`{"jsonrpc":"2.0","id":2,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"c"},"options":[]}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"outcome":{"outcome":"cancelled"}}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`,
		`{"jsonrpc":"2.0","id":5,"method":"session/set_mode","params":{"sessionId":"s","modeId":"m"}}`,
		`{"jsonrpc":"2.0","id":5,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/x"}}`,
		`{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"no"}}`,
		`{"jsonrpc":"2.0","id":5,"result":{}}`,
		`{"jsonrpc":"2.0","id":9,"result":{"stopReason":"cancelled"}}`,
		`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":9}}`,
		`{"jsonrpc":"2.0","id":10,"method":"terminal/create","params":{"sessionId":"s","command":"ls"}}`,
		`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":10}}`,
	}, "\n")
	frames, skips, _ := scanAll(t, in, DefaultMaxLine)
	var dirs []string
	for _, f := range frames {
		dirs = append(dirs, f.Item.Dir.String())
	}
	want := []string{"c2a", "a2c", "c2a", "a2c", "c2a", "a2c", "c2a", "a2c", "a2c", "a2c", "a2c"}
	if diff := cmp.Diff(want, dirs); diff != "" {
		t.Errorf("directions (-want +got):\n%s", diff)
	}
	if len(skips) != 1 || skips[0].Line != 10 {
		t.Errorf("skips %v (the cancel of an answered request cannot be placed)", skips)
	}
}

// TestDetect: the first ACP line decides the layout; an initialize
// exchange that negotiated version 2 is refused; a file without any ACP
// line has nothing to convert.
func TestDetect(t *testing.T) {
	v2 := `{"dir":"send","line":"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":2}}"}
{"dir":"recv","line":"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":2}}"}
`
	down := strings.ReplaceAll(v2, `{\"protocolVersion\":2}}"}`+"\n"+`{"dir":"recv"`, `{\"protocolVersion\":2}}"}`+"\n"+`{"dir":"recv"`)
	down = strings.Replace(down, `"result\":{\"protocolVersion\":2}`, `"result\":{\"protocolVersion\":1}`, 1)
	for _, c := range []struct {
		name, in string
		format   Format
		err      string
	}{
		{"v2", v2, "", "not an ACP v1 log: its initialize exchange negotiated protocolVersion 2"},
		{"negotiated down", down, FormatTrace, ""},
		{"junk", "a\nb\n{}\n", "", "no ACP v1 line in 3 lines: nothing to convert"},
		{"empty", "", "", "no ACP v1 line in 0 lines: nothing to convert"},
		{"updates", "x\n" + `{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]}}`, FormatUpdates, ""},
	} {
		s := NewScanner(bufio.NewReader(strings.NewReader(c.in)), "", DefaultMaxLine)
		err := s.Detect()
		if (err == nil) != (c.err == "") || err != nil && err.Error() != c.err {
			t.Errorf("%s: err %v, want %q", c.name, err, c.err)
		}
		if err == nil && s.Format() != c.format {
			t.Errorf("%s: format %q, want %q", c.name, s.Format(), c.format)
		}
	}
}

// TestMethodTableMatchesV1Schema: every method of the official v1 schema
// is in the direction table the way its x-side says (the protocol-level
// $/cancel_request travels with the request it cancels).
func TestMethodTableMatchesV1Schema(t *testing.T) {
	var schema struct {
		Defs map[string]struct {
			Method string `json:"x-method"`
			Side   string `json:"x-side"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(testpeers.SchemaBytes(testpeers.V1), &schema); err != nil {
		t.Fatal(err)
	}
	n := 0
	for name, d := range schema.Defs {
		if d.Method == "" {
			continue
		}
		n++
		want := map[string]sdk.Direction{"agent": sdk.C2A, "client": sdk.A2C}[d.Side]
		got, ok := methodDir[d.Method]
		switch {
		case d.Side == "protocol":
			if ok || d.Method != cancelRequest {
				t.Errorf("%s: %s is protocol-level", name, d.Method)
			}
		case !ok || got != want:
			t.Errorf("%s: %s (x-side %s) has direction %v in the table", name, d.Method, d.Side, got)
		}
	}
	if n < 40 {
		t.Fatalf("only %d x-method definitions: the schema layout changed", n)
	}
}
