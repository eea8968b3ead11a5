package acpasr

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/acptap/acptap/internal/pluginwire"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/mappertest"
)

// TestDeterminism: the same start request and frames give byte-identical
// outputs, however often and however the frames are batched.
func TestDeterminism(t *testing.T) {
	frames := loadFrames(t, "turn")
	ref := render(mapAll(t, startReq(""), frames))
	for i := 0; i < 20; i++ {
		outs := mappertest.Run(t, newMapper(), startReq(""), frames, 1+i%4)
		if got := render(outs); !bytes.Equal(got, ref) {
			t.Fatalf("run %d differs:\n%s\nvs\n%s", i, got, ref)
		}
	}
}

// TestConformance runs the SDK's conformance suite: Info, determinism over
// batch sizes and real gRPC, and its malformed corpus.
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("starts gRPC servers")
	}
	corpus := map[string][]sdk.Frame{}
	matches, _ := filepath.Glob("testdata/*.frames")
	for _, m := range matches {
		name := strings.TrimSuffix(filepath.Base(m), ".frames")
		corpus[name] = loadFrames(t, name)
	}
	mappertest.Suite{New: newMapper, Start: startReq(""), Corpus: corpus}.Run(t)
}

// TestMalformedInput: garbage becomes diagnostics, never a panic or an
// error, and never an internal-error diagnostic.
func TestMalformedInput(t *testing.T) {
	tests := []struct {
		name, line, summary string
	}{
		{"not JSON", `c2a hello`, "malformed JSON-RPC message"},
		{"JSON but not an object", `a2c [1,"x"]`, "malformed JSON-RPC message"},
		{"invalid UTF-8", "b64 a2c /w==", "invalid UTF-8 in frame"},
		{"method not a string", `c2a {"jsonrpc":"2.0","id":7,"method":5}`, "malformed JSON-RPC message"},
		{"neither request nor response", `a2c {"jsonrpc":"2.0","foo":1}`, "malformed JSON-RPC message"},
		{"unknown method", `c2a {"jsonrpc":"2.0","id":7,"method":"session/frobnicate","params":{}}`, "unknown method"},
		{"vendor method", `c2a {"jsonrpc":"2.0","method":"_zed/ping"}`, "vendor method not mapped"},
		{"wrong direction", `c2a {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"state_update","state":"idle"}}}`, "method sent in the wrong direction"},
		{"response without request", `a2c {"jsonrpc":"2.0","id":77,"result":{}}`, "response without request"},
		{"params not an object", `a2c {"jsonrpc":"2.0","method":"session/update","params":[1]}`, "params is not an object"},
		{"update without sessionId", `a2c {"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"state_update","state":"idle"}}}`, "session/update without a sessionId"},
		{"update with an empty sessionId", `a2c {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"","update":{"sessionUpdate":"state_update","state":"idle"}}}`, "session/update without a sessionId"},
		{"update not an object", upd(`"nope"`), "session/update without an update object"},
		{"kind not a string", upd(`{"sessionUpdate":7}`), "session/update without a sessionUpdate kind"},
		{"chunk content not a block", upd(`{"sessionUpdate":"agent_message_chunk","messageId":"m","content":[1,2]}`), "agent_message_chunk: content is not a content block"},
		{"tool name not a string", upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t","name":5}`), "tool_call_update: name is not a string"},
		{"tool content not an array", upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t","content":{}}`), "tool_call_update: content is not an array"},
		{"tool item without type", upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t","content":[{"x":1}]}`), "tool call content item is not an object with a type"},
		{"location without path", upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t","locations":[{"line":1}]}`), "tool call location has no path"},
		{"_meta not an object", upd(`{"sessionUpdate":"agent_message","messageId":"m","_meta":[]}`), "_meta is not an object"},
		{"session/new without cwd", `c2a {"jsonrpc":"2.0","id":8,"method":"session/new","params":{"cwd":5}}`, "session/new: cwd missing or not a string"},
		{"prompt response without messageId", `c2a {"jsonrpc":"2.0","id":8,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}` + "\n" + `a2c {"jsonrpc":"2.0","id":8,"result":{}}`, "session/prompt response has no messageId"},
		{"session frame without a session", "session {\"id\":\"\",\"connections\":1}", "session frame without a session"},
		{"update for an unopened session", `a2c {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"zz","update":{"sessionUpdate":"state_update","state":"idle"}}}`, "session not opened on this connection"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outs := mapAll(t, startReq(""), parseFrames(t, opened(tt.line)))
			found := false
			for _, d := range diags(outs) {
				if d.Summary == sdk.SummaryInternal {
					t.Errorf("internal error: %s", d.Detail)
				}
				found = found || d.Summary == tt.summary
			}
			if !found {
				t.Errorf("no %q diagnostic; got %q", tt.summary, summaries(outs))
			}
			checkValid(t, outs)
			checkStreams(t, outs)
		})
	}
}

// checkValid asserts every header and record is one valid UTF-8 JSON line.
func checkValid(t testing.TB, outs []sdk.Output) {
	t.Helper()
	for _, o := range outs {
		if o.Kind == sdk.Diagnostic {
			if o.Summary == sdk.SummaryInternal {
				t.Fatalf("internal error: %s", o.Detail)
			}
			continue
		}
		if !json.Valid(o.JSON) || !utf8.Valid(o.JSON) || bytes.IndexByte(o.JSON, '\n') >= 0 {
			t.Fatalf("output is not one valid JSON line: %q", o.JSON)
		}
	}
}

// FuzzMapFrames: any byte lines, in either direction, never panic and
// every output is valid JSON.
func FuzzMapFrames(f *testing.F) {
	matches, _ := filepath.Glob("testdata/*.frames")
	for _, m := range matches {
		b, _ := os.ReadFile(m)
		f.Add(b)
	}
	f.Add([]byte("c2a {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/new\",\"params\":{\"cwd\":\"/\"}}\na2c {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"sessionId\":\"\"}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		b := pluginwire.NewFrameBuilder()
		var frames []sdk.Frame
		for i, line := range bytes.Split(data, []byte("\n")) {
			dir := sdk.C2A
			if word, rest, ok := bytes.Cut(line, []byte(" ")); ok && (string(word) == "a2c" || string(word) == "c2a") {
				dir, _ = sdk.ParseDirection(string(word))
				line = rest
			} else if i%2 == 1 {
				dir = sdk.A2C
			}
			if bytes.HasPrefix(line, []byte("gap")) {
				frames = b.Gap(frames, uint64(i+1), dir, base, sdk.Gap{Frames: 1})
				continue
			}
			frames = b.Line(frames, uint64(i+1), dir, base, line)
		}
		sess, err := newMapper().Start(context.Background(), startReq(""))
		if err != nil {
			t.Fatal(err)
		}
		outs, err := sess.Map(context.Background(), frames)
		if err != nil {
			t.Fatal(err)
		}
		fin, err := sess.Finish(context.Background(), "eof")
		if err != nil {
			t.Fatal(err)
		}
		all := append(outs, fin...)
		checkValid(t, all)
		checkStreams(t, all)
	})
}

// TestMalformedCorpusValid: the conformance suite's malformed corpus gives
// streams that pass asrcheck.Validate.
func TestMalformedCorpusValid(t *testing.T) {
	checkStreams(t, mapAll(t, startReq(""), mappertest.Malformed(base)))
}

// checkStreams: one JSON line per output, no internal error, and every
// session's stream valid ASR (mappertest.CheckStreams).
func checkStreams(t testing.TB, outs []sdk.Output) {
	t.Helper()
	mappertest.CheckStreams(t, outs)
}
