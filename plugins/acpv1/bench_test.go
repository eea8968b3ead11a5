package acpv1

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/internal/pluginwire"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/mappertest"
)

// benchLog is a synthetic ACP v1 conversation like host/logimport's
// benchmark input: 8 interleaved sessions; each turn a prompt, 3 thought
// chunks, a plan, a tool call with a permission and a v1 diff, 10 message
// chunks and the prompt response.
func benchLog(turns int) []sdk.Frame {
	const sessions = 8
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 4)
	code := strconv.Quote(strings.Repeat("func main() {\n\tfmt.Println(\"hello, world\")\n}\n", 24))
	b := pluginwire.NewFrameBuilder()
	var frames []sdk.Frame
	seq := uint64(0)
	add := func(dir sdk.Direction, format string, args ...any) {
		seq++
		frames = b.Line(frames, seq, dir, base.Add(time.Duration(seq)*time.Millisecond), []byte(fmt.Sprintf(format, args...)))
	}
	add(sdk.C2A, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
	add(sdk.A2C, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentInfo":{"name":"bench-agent","version":"1"}}}`)
	clientID, agentID := 1, 0
	for s := 1; s <= sessions; s++ {
		add(sdk.C2A, `{"jsonrpc":"2.0","id":%d,"method":"session/new","params":{"cwd":"/work/p%d","mcpServers":[]}}`, clientID, s)
		add(sdk.A2C, `{"jsonrpc":"2.0","id":%d,"result":{"sessionId":"bench-%d"}}`, clientID, s)
		clientID++
	}
	for turn := 0; turn < turns; turn++ {
		sid := fmt.Sprintf("bench-%d", turn%sessions+1)
		upd := func(u string, args ...any) {
			add(sdk.A2C, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"%s","update":`+u+`}}`, append([]any{sid}, args...)...)
		}
		prompt := clientID
		clientID++
		add(sdk.C2A, `{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"%s","prompt":[{"type":"text","text":"turn %d: %s"}]}}`, prompt, sid, turn, text)
		for i := 0; i < 3; i++ {
			upd(`{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"thinking %d: %s"}}`, i, text)
		}
		upd(`{"sessionUpdate":"plan","entries":[{"content":"edit main.go","priority":"high","status":"in_progress"},{"content":"run tests","priority":"medium","status":"pending"}]}`)
		call := fmt.Sprintf("call-%d", turn)
		upd(`{"sessionUpdate":"tool_call","toolCallId":"%s","title":"Edit main.go","kind":"edit","status":"pending","locations":[{"path":"/work/main.go"}]}`, call)
		add(sdk.A2C, `{"jsonrpc":"2.0","id":%d,"method":"session/request_permission","params":{"sessionId":"%s","toolCall":{"toolCallId":"%s"},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"}]}}`, agentID, sid, call)
		add(sdk.C2A, `{"jsonrpc":"2.0","id":%d,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}`, agentID)
		agentID++
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"%s","status":"in_progress"}`, call)
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"%s","status":"completed","content":[{"type":"diff","path":"/work/main.go","oldText":%s,"newText":%s}]}`, call, code, code)
		for i := 0; i < 10; i++ {
			upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"%d %s"}}`, i, text)
		}
		add(sdk.A2C, `{"jsonrpc":"2.0","id":%d,"result":{"stopReason":"end_turn"}}`, prompt)
	}
	return frames
}

// benchInput is the synthetic log of BenchmarkConvertV1, its size set as
// b's bytes (the input rate).
func benchInput(b *testing.B) []sdk.Frame {
	frames := benchLog(2000)
	var size int64
	for _, f := range frames {
		size += int64(len(f.Data)) + 1
	}
	b.SetBytes(size)
	return frames
}

// BenchmarkConvertV1 maps the synthetic log in process (convert mode), in
// batches of 64 frames as the host sends them; it reports the input rate.
func BenchmarkConvertV1(b *testing.B) {
	frames := benchInput(b)
	for b.Loop() {
		sess, err := New().Start(context.Background(), startReq(sdk.ModeConvert, ""))
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < len(frames); i += 64 {
			if _, err := sess.Map(context.Background(), frames[i:min(i+64, len(frames))]); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := sess.Finish(context.Background(), "eof"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConvertV1Prepared is BenchmarkConvertV1 with the batches
// prepared as the plugin server prepares them (pluginwire.Preparer,
// mappertest.MapPrepared), 1,024 frames a batch (the offline feeders').
func BenchmarkConvertV1Prepared(b *testing.B) {
	frames := benchInput(b)
	for b.Loop() {
		s, err := New().Start(context.Background(), startReq(sdk.ModeConvert, ""))
		if err != nil {
			b.Fatal(err)
		}
		mappertest.MapPrepared(b, s.(*translator), frames, 1024)
	}
}
