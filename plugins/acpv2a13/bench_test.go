package acpv2a13

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/internal/pluginwire"
	"github.com/acptap/acptap/plugins/internal/acpasr"
	"github.com/acptap/acptap/sdk"
)

// benchFrames is an alpha.13 conversation: per turn a prompt, its echo, a
// running state with background work, 10 message chunks, a tool call that
// advertises cancel, its cancel request and response, the cancelled
// update, and idle.
func benchFrames(turns int) []sdk.Frame {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 4)
	b := pluginwire.NewFrameBuilder()
	var frames []sdk.Frame
	seq := uint64(0)
	add := func(dir sdk.Direction, format string, args ...any) {
		seq++
		frames = b.Line(frames, seq, dir, base.Add(time.Duration(seq)*time.Millisecond), []byte(fmt.Sprintf(format, args...)))
	}
	upd := func(u string, args ...any) {
		add(sdk.A2C, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":`+u+`}}`, args...)
	}
	add(sdk.C2A, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"c","version":"1"}}}`)
	add(sdk.A2C, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2,"info":{"name":"bench-agent","version":"1"},"capabilities":{"session":{"title":{}}}}}`)
	add(sdk.C2A, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`)
	add(sdk.A2C, `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}`)
	id := 2
	for turn := 0; turn < turns; turn++ {
		add(sdk.C2A, `{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"turn %d: %s"}]}}`, id, turn, text)
		upd(`{"sessionUpdate":"user_message","messageId":"u%d","content":[{"type":"text","text":"turn %d: %s"}]}`, turn, turn, text)
		add(sdk.A2C, `{"jsonrpc":"2.0","id":%d,"result":{"messageId":"u%d"}}`, id, turn)
		id++
		upd(`{"sessionUpdate":"state_update","state":"running","background":[{"type":"terminal","terminalId":"t1"}]}`)
		for i := 0; i < 10; i++ {
			upd(`{"sessionUpdate":"agent_message_chunk","messageId":"a%d","content":{"type":"text","text":"%d %s"}}`, turn, i, text)
		}
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"c%d","name":"bash","title":"Run","kind":"execute","status":"in_progress","capabilities":{"cancel":{}}}`, turn)
		add(sdk.C2A, `{"jsonrpc":"2.0","id":%d,"method":"tool_call/cancel","params":{"sessionId":"s1","toolCallId":"c%d"}}`, id, turn)
		add(sdk.A2C, `{"jsonrpc":"2.0","id":%d,"result":{}}`, id)
		id++
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"c%d","status":"cancelled","capabilities":null}`, turn)
		upd(`{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn","background":[]}`)
	}
	return frames
}

// BenchmarkAlpha13 maps the conversation through the plugin (translator
// and engine) and through the engine alone with the same options (Map:
// the frames as they are), so the translator's cost is the difference.
func BenchmarkAlpha13(b *testing.B) {
	frames := benchFrames(200)
	run := func(b *testing.B, start func() sdk.Session) {
		b.ReportAllocs()
		for b.Loop() {
			s := start()
			for i := 0; i < len(frames); i += 256 {
				if _, err := s.Map(context.Background(), frames[i:min(i+256, len(frames))]); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := s.Finish(context.Background(), "end"); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(frames))*float64(b.N)/b.Elapsed().Seconds(), "frames/s")
	}
	cfg, _ := acpasr.ParseConfig(nil)
	b.Run("plugin", func(b *testing.B) {
		run(b, func() sdk.Session { return newTranslator(options(cfg), live) })
	})
	b.Run("engine", func(b *testing.B) {
		run(b, func() sdk.Session { return acpasr.NewSession(options(cfg), live) })
	})
}
