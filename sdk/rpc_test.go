package sdk_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/internal/pluginwire"
	"github.com/acptap/acptap/sdk"
)

func TestFrameRPC(t *testing.T) {
	for _, c := range []struct {
		line                          string
		kind                          sdk.RPCKind
		method, id, params, result, e string
		session                       string
		err                           error
	}{
		{line: `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`,
			kind: sdk.Request, method: "session/prompt", id: "3", params: `{"sessionId":"s1","prompt":[]}`, session: "s1"},
		{line: ` {"method":"session/update","jsonrpc":"2.0","params":{"update":{"sessionId":"no"},"sessionId":"s\u0032"}} `,
			kind: sdk.Notification, method: "session/update", params: `{"update":{"sessionId":"no"},"sessionId":"s\u0032"}`, session: "s2"},
		{line: `{"jsonrpc":"2.0","id":"a b","result":{"sessionId":"new"}}`, kind: sdk.Response, id: `"a b"`, result: `{"sessionId":"new"}`, session: "new"},
		{line: `{"jsonrpc":"2.0","id":null,"method":"x","params":"p"}`, kind: sdk.Request, method: "x", id: "null", params: `"p"`},
		{line: `{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"m"}}`, kind: sdk.ErrorResponse, id: "1", e: `{"code":-1,"message":"m"}`},
		{line: `{"jsonrpc":"2.0","id":1,"error":"no","result":null}`, kind: sdk.Response, id: "1", e: `"no"`, result: "null"},
		{line: `{"\u006dethod":"_acme/x","params":{"sessionId":7}}`, kind: sdk.Notification, method: "_acme/x", params: `{"sessionId":7}`},
		{line: `{"jsonrpc":"2.0","id":1}`, err: sdk.ErrNotRPC},
		{line: `{"jsonrpc":"2.0","method":5}`, err: sdk.ErrMethod},
		{line: `[1]`, err: sdk.ErrNotObject},
		{line: `{"jsonrpc":"2.0"`, err: sdk.ErrNotObject},
		{line: "\xff", err: sdk.ErrNotObject},
		{line: ``, err: sdk.ErrNotObject},
	} {
		f := sdk.Frame{Kind: sdk.KindLine, Data: []byte(c.line)}
		r := f.RPC()
		if r.Kind != c.kind || r.Method != c.method || string(r.ID) != c.id || string(r.Params) != c.params ||
			string(r.Result) != c.result || string(r.Error) != c.e || r.SessionID != c.session || r.Err != c.err {
			t.Errorf("%s:\n got %+v", c.line, *r)
		}
	}
}

// TestFrameRPCCache: the head is read once per frame data; a copy of the
// frame shares it, a frame whose data is replaced is read again, and gap
// and session frames have none.
func TestFrameRPCCache(t *testing.T) {
	f := sdk.Frame{Kind: sdk.KindLine, Data: []byte(`{"jsonrpc":"2.0","method":"a"}`)}
	r := f.RPC()
	g := f
	if g.RPC() != r || f.RPC() != r {
		t.Error("the head was read again for the same data")
	}
	g.Data = []byte(`{"jsonrpc":"2.0","method":"b"}`)
	if g.RPC().Method != "b" || f.RPC().Method != "a" {
		t.Errorf("replaced data kept the old head: %q", g.RPC().Method)
	}
	for _, k := range []sdk.FrameKind{sdk.KindGap, sdk.KindSession} {
		h := sdk.Frame{Kind: k, Data: f.Data}
		if r := h.RPC(); r.Kind != sdk.NotRPC || r.Err != nil {
			t.Errorf("kind %d: %+v", k, *r)
		}
	}
}

// benchLines are wire lines of a typical turn: a prompt, streamed chunks,
// a tool call, a permission round trip, the response.
var benchLines = []string{
	`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"sess_1","prompt":[{"type":"text","text":"fix the failing test in the parser package"}]}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"Let me look at the parser tests first. I will run them and read the failure."}}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1","update":{"sessionUpdate":"tool_call_update","toolCallId":"call_1","title":"Run go test ./parser","kind":"execute","status":"in_progress","rawInput":{"command":"go test ./parser"}}}}`,
	`{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"sess_1","toolCall":{"toolCallId":"call_1"},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"}]}}`,
	`{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1","update":{"sessionUpdate":"tool_call_update","toolCallId":"call_1","status":"completed","content":[{"type":"content","content":{"type":"text","text":"` + strings.Repeat("ok  \tparser\t0.012s\n", 40) + `"}}]}}}`,
	`{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn","messageId":"u1"}}`,
}

func benchFrames(b *testing.B) ([][]byte, []sdk.Direction, int) {
	var lines [][]byte
	var dirs []sdk.Direction
	n := 0
	for i, l := range benchLines {
		lines = append(lines, []byte(l))
		d := sdk.A2C
		if i == 0 || i == 4 {
			d = sdk.C2A
		}
		dirs = append(dirs, d)
		n += len(l)
	}
	b.SetBytes(int64(n))
	return lines, dirs, n
}

// BenchmarkFrameBuilder is what the host's frame builder costs per turn
// today (it reads id and method of the lines with an "id" only).
func BenchmarkFrameBuilder(b *testing.B) {
	lines, dirs, _ := benchFrames(b)
	fb := pluginwire.NewFrameBuilder()
	var out []sdk.Frame
	for i := 0; b.Loop(); i++ {
		out = out[:0]
		for j, l := range lines {
			out = fb.Line(out, uint64(i*len(lines)+j), dirs[j], time.Time{}, l)
		}
	}
}

// BenchmarkFrameBuilderHead adds reading every frame's head: what filling
// it on the host would cost the host.
func BenchmarkFrameBuilderHead(b *testing.B) {
	lines, dirs, _ := benchFrames(b)
	fb := pluginwire.NewFrameBuilder()
	var out []sdk.Frame
	for i := 0; b.Loop(); i++ {
		out = out[:0]
		for j, l := range lines {
			out = fb.Line(out, uint64(i*len(lines)+j), dirs[j], time.Time{}, l)
		}
		for k := range out {
			out[k].RPC()
		}
	}
}

// BenchmarkRPC is reading the heads of a turn's frames: what a plugin pays
// when it asks for them.
func BenchmarkRPC(b *testing.B) {
	lines, _, _ := benchFrames(b)
	for b.Loop() {
		for _, l := range lines {
			f := sdk.Frame{Kind: sdk.KindLine, Data: l}
			f.RPC()
		}
	}
}
