package acpv1

import (
	"strconv"
	"strings"
	"testing"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/mappertest"
)

// FuzzV1Shapes is a structure-aware fuzzer for ACP v1: the input bytes
// choose v1 messages (updates of every v1 kind, prompts and their
// stopReason or error responses, session/load replays, set_mode,
// permissions, fs/* and terminal/* requests and responses, initialize
// responses) whose members take values of every JSON type. Every output
// stream, live and converted, must pass asrcheck.Validate.
func FuzzV1Shapes(f *testing.F) {
	for _, seed := range []string{"", "\x00\x01\x02\x03", "abcdefghijklmnopqrstuvwxyz", strings.Repeat("\x05\x11\x2b\x03", 30)} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &v1Shapes{data: data}
		lines := []string{initReq, g.initResp(), newReq, newResp}
		for i := 0; i < 60 && g.more(); i++ {
			lines = append(lines, g.line())
		}
		frames := parseFrames(t, wire(lines...))
		for _, mode := range []sdk.Mode{sdk.ModeRecord, sdk.ModeConvert} {
			checkStreams(t, mappertest.Run(t, New(), startReq(mode, ""), frames, 0))
		}
	})
}

type v1Shapes struct {
	data []byte
	pos  int
}

func (g *v1Shapes) more() bool { return g.pos < len(g.data) }

func (g *v1Shapes) next() int {
	if g.pos >= len(g.data) {
		return 0
	}
	b := g.data[g.pos]
	g.pos++
	return int(b)
}

func (g *v1Shapes) pick(options ...string) string { return options[g.next()%len(options)] }

var v1Values = []string{
	`null`, `""`, `"x"`, `"_"`, `"_acme"`, `"/w/proj/a.go"`, `"rel/a.go"`, `"msg:1"`, `"msg:2"`, `"m1"`, `"t1"`, `"term-1"`,
	`0`, `1`, `-1`, `1.5`, `true`, `{}`, `[]`, `[1]`, `"completed"`, `"failed"`, `"in_progress"`, `"pending"`, `"end_turn"`,
	`{"type":"text","text":"hi"}`, `{"type":"text"}`, `{"text":"x"}`, `{"type":"image","data":"AA==","mimeType":"image/png"}`,
	`[{"type":"text","text":"hi"}]`, `[{"type":"text"},7]`,
	`[{"type":"content","content":{"type":"text","text":"c"}}]`, `[{"type":"content","content":{"x":1}}]`,
	`[{"type":"diff","path":"/w/proj/a.go","oldText":"a","newText":"b"}]`, `[{"type":"diff","path":"/w/proj/n.go","newText":"n"}]`,
	`[{"type":"diff","path":"rel.go","newText":"n"}]`, `[{"type":"diff","path":"/w/proj/a.go","oldText":5,"newText":"b"}]`,
	`[{"type":"diff","path":"/w/proj/a.go"}]`, `[{"type":"terminal","terminalId":"term-1"}]`,
	`[{"path":"/w/proj/a","line":2}]`, `[{"path":"rel","line":-3}]`,
	`[{"content":"a","priority":"high","status":"pending"},1]`, `{"exitCode":1}`, `{"exitCode":1.5,"signal":3}`,
	`{"toolCallId":"t1","title":"x"}`, `[{"optionId":"o","name":"O","kind":"allow_once"}]`, `{"k":1}`,
}

var v1Members = []string{
	"messageId", "content", "toolCallId", "name", "title", "kind", "status", "locations", "rawInput", "rawOutput",
	"entries", "currentModeId", "_meta", "configOptions", "used", "size", "severity", "compactionId", "availableCommands",
}

var v1Kinds = []string{
	"user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan",
	"current_mode_update", "config_option_update", "session_info_update", "usage_update", "notice",
	"compaction_update", "compaction_summary_chunk", "available_commands_update", "_vendor",
}

func (g *v1Shapes) initResp() string {
	return `a2c {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentInfo":` +
		g.pick(`{"name":"Claude Code","version":"1"}`, `null`, `{}`, `{"name":""}`, `{"name":5}`, `"x"`) + `}}`
}

func (g *v1Shapes) value() string { return v1Values[g.next()%len(v1Values)] }

func (g *v1Shapes) update() string {
	var b strings.Builder
	b.WriteString(`{"sessionUpdate":` + strconv.Quote(v1Kinds[g.next()%len(v1Kinds)]))
	seen := map[string]bool{}
	for i, n := 0, g.next()%7; i < n; i++ {
		k := v1Members[g.next()%len(v1Members)]
		if !seen[k] {
			seen[k] = true
			b.WriteString("," + strconv.Quote(k) + ":" + g.value())
		}
	}
	return b.String() + "}"
}

func (g *v1Shapes) line() string {
	id := strconv.Itoa(g.next() % 6)
	session := g.pick(`"s1"`, `"s1"`, `"s1"`, `"s2"`)
	switch g.next() % 20 {
	case 0:
		return `c2a {"jsonrpc":"2.0","id":` + id + `,"method":"session/prompt","params":{"sessionId":` + session + `,"prompt":` + g.value() + `}}`
	case 1:
		return `a2c {"jsonrpc":"2.0","id":` + id + `,"result":{"stopReason":` + g.pick(`"end_turn"`, `"cancelled"`, `5`, `null`) + `}}`
	case 2:
		return `a2c {"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32603,"message":"boom"}}`
	case 3:
		return `c2a {"jsonrpc":"2.0","id":` + id + `,"method":"session/load","params":{"sessionId":` + session + `,"cwd":"/w/proj","mcpServers":[]}}`
	case 4:
		return `a2c {"jsonrpc":"2.0","id":` + id + `,"result":{}}`
	case 5:
		return `c2a {"jsonrpc":"2.0","id":` + id + `,"method":"session/set_mode","params":{"sessionId":` + session + `,"modeId":` + g.value() + `}}`
	case 6:
		return `a2c {"jsonrpc":"2.0","id":` + id + `,"method":"session/request_permission","params":{"sessionId":` + session + `,"toolCall":` + g.value() + `,"options":` + g.value() + `}}`
	case 7:
		return `c2a {"jsonrpc":"2.0","id":` + id + `,"result":{"outcome":{"outcome":"selected","optionId":"o"}}}`
	case 8:
		return `a2c {"jsonrpc":"2.0","id":` + id + `,"method":` + g.pick(`"fs/read_text_file"`, `"fs/write_text_file"`) + `,"params":{"sessionId":` + session + `,"path":` + g.value() + `}}`
	case 9:
		return `a2c {"jsonrpc":"2.0","id":` + id + `,"method":"terminal/create","params":{"sessionId":` + session + `,"command":` + g.value() + `,"args":` + g.value() + `,"cwd":` + g.value() + `}}`
	case 10:
		return `a2c {"jsonrpc":"2.0","id":` + id + `,"method":` + g.pick(`"terminal/output"`, `"terminal/wait_for_exit"`, `"terminal/kill"`, `"terminal/release"`) + `,"params":{"sessionId":` + session + `,"terminalId":` + g.pick(`"term-1"`, `"other"`, `5`) + `}}`
	case 11:
		return `c2a {"jsonrpc":"2.0","id":` + id + `,"result":{"terminalId":` + g.value() + `,"output":` + g.value() + `,"truncated":` + g.value() + `,"exitStatus":` + g.value() + `,"exitCode":` + g.value() + `,"signal":` + g.value() + `,"content":` + g.value() + `}}`
	case 12:
		return `c2a {"jsonrpc":"2.0","id":` + id + `,"error":{"code":-1,"message":"no"}}`
	case 13:
		return `c2a {"jsonrpc":"2.0","id":` + id + `,"method":"session/close","params":{"sessionId":` + session + `}}`
	case 14:
		return `gap a2c 1 10 lost`
	}
	return `a2c {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":` + session + `,"update":` + g.update() + `}}`
}
