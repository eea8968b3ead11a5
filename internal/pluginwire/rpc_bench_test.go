package pluginwire_test

// The cost of the JSON-RPC head (sdk.Frame.RPC) beside the frame builder's,
// to decide where it is read: on the host for every frame and carried on
// the wire, or by a plugin for the frames it asks about (docs/plugin-protocol.md).

import (
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/internal/pluginwire"
	"github.com/acptap/acptap/sdk"
)

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
