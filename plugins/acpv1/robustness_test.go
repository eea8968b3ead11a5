package acpv1

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/acptap/acptap/internal/pluginwire"
	"github.com/acptap/acptap/sdk"
)

// TestMalformedV1: malformed ACP v1 traffic becomes diagnostics and
// audit-only records, never a panic, an error or an invalid stream; an
// update the translator cannot map is kept verbatim under its v1 kind.
func TestMalformedV1(t *testing.T) {
	tests := []struct {
		name, line, summary, audit string
	}{
		{"tool_call without toolCallId", upd(`{"sessionUpdate":"tool_call","title":"x"}`), "tool_call: toolCallId missing or not a string", "org.agent-session.acp/tool_call"},
		{"plan without entries", upd(`{"sessionUpdate":"plan","entries":{}}`), "plan: entries is not an array", "org.agent-session.acp/plan"},
		{"chunk without content", upd(`{"sessionUpdate":"agent_message_chunk","messageId":"m"}`), "agent_message_chunk: content is not a content block", "org.agent-session.acp/agent_message_chunk"},
		{"chunk with a block without text", upd(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text"}}`), "agent_message_chunk: content is not a content block (text block without a string text)", "org.agent-session.acp/agent_message_chunk"},
		{"current_mode_update without a mode", upd(`{"sessionUpdate":"current_mode_update","currentModeId":7}`), "current_mode_update: currentModeId missing or not a string", "org.agent-session.acp/current_mode_update"},
		{"fs without a session", `a2c {"jsonrpc":"2.0","id":3,"method":"fs/read_text_file","params":{"path":"/a"}}`, "fs/read_text_file without a sessionId", ""},
		{"fs in the wrong direction", `c2a {"jsonrpc":"2.0","id":3,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"/a"}}`, "method sent in the wrong direction", ""},
		{"terminal/create response without an id", agentReq(3, "terminal/create", `{"sessionId":"s1","command":"x"}`) + "\n" + clientResult(3, `{}`), "terminal/create response has no terminalId", ""},
		{"terminal/output without output", agentReq(3, "terminal/output", `{"sessionId":"s1","terminalId":"t"}`) + "\n" + clientResult(3, `{"truncated":false}`), "terminal/output response has no output string", ""},
		{"relative diff path", upd(`{"sessionUpdate":"tool_call","toolCallId":"t","title":"x","status":"completed","content":[{"type":"diff","path":"a.go","newText":"x"}]}`), "diff change without a string operation and the absolute paths it needs", ""},
		{"no agentInfo", `a2c {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`, "initialize response has no agentInfo", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outs := mapAll(t, live, parseFrames(t, wire(initReq, newReq, newResp, tt.line)))
			found := false
			for _, s := range summaries(outs) {
				found = found || s == tt.summary
			}
			if !found {
				t.Errorf("no %q diagnostic; got %q", tt.summary, summaries(outs))
			}
			if tt.audit != "" {
				a := ofType(records(t, outs, "s1"), tt.audit)
				if len(a) != 1 {
					t.Fatalf("no %s record", tt.audit)
				}
				var want bytes.Buffer
				line := []byte(tt.line)
				i := bytes.Index(line, []byte(`"update":`))
				want.Write(line[i+len(`"update":`) : len(line)-2])
				if got := js(a[0]["native"].(map[string]any)["record"]); got != js(decodeJSON(t, want.Bytes())) {
					t.Errorf("native.record = %s, want the update verbatim %s", got, want.Bytes())
				}
			}
		})
	}
}

func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := jsonUnmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return v
}

// FuzzMapV1Frames: any byte lines, in either direction, never panic, and
// every output stream passes asrcheck.Validate (warnings included).
func FuzzMapV1Frames(f *testing.F) {
	for _, name := range sortedNames(kindFixtures) {
		f.Add([]byte(fuzzSeed(kindFixtures[name])))
	}
	for _, name := range sortedNames(lossFixtures) {
		f.Add([]byte(fuzzSeed(lossFixtures[name])))
	}
	if b, err := os.ReadFile(filepath.Join("..", "internal", "acpasr", "testdata", "full.frames")); err == nil {
		f.Add(b)
	}
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
		for _, mode := range []sdk.Mode{sdk.ModeRecord, sdk.ModeConvert} {
			sess, err := New().Start(context.Background(), startReq(mode, ""))
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
			checkStreams(t, append(outs, fin...))
		}
	})
}

// fuzzSeed is a fixture as the fuzz target reads it ("#" comments and
// blank lines dropped).
func fuzzSeed(fixture string) string {
	var b bytes.Buffer
	for _, l := range bytes.Split([]byte(fixture), []byte("\n")) {
		if len(bytes.TrimSpace(l)) == 0 || l[0] == '#' {
			continue
		}
		b.Write(l)
		b.WriteByte('\n')
	}
	return b.String()
}
