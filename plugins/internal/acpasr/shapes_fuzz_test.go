package acpasr

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzUpdateShapes is a structure-aware fuzzer: the input bytes choose ACP
// messages (session updates of every kind, prompts, permissions,
// elicitations, resumes, forks, closes and their responses) whose members
// are drawn from values of every JSON type, valid and malformed, so that
// every field the engine reads meets every shape. Every output stream must
// pass asrcheck.Validate (warnings included).
func FuzzUpdateShapes(f *testing.F) {
	for _, seed := range []string{"", "\x00\x01\x02\x03", "abcdefghijklmnopqrstuvwxyz", strings.Repeat("\x07\x13\x2a", 40)} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &shapes{data: data}
		lines := []string{initReq, initResp, newReq, newResp}
		for i := 0; i < 60 && g.more(); i++ {
			lines = append(lines, g.line())
		}
		frames := parseFrames(t, wire(lines...))
		outs := mapAll(t, startReq(""), frames)
		checkValid(t, outs)
		checkStreams(t, outs)
		// The same frames with partial snapshots (ASR-705's MAY): valid
		// too, and ending at the same context view but for partial results.
		n := 1 + len(data)%3
		snap := mapAll(t, startReq(fmt.Sprintf(`{"partialEvery":%d}`, n)), frames)
		checkValid(t, snap)
		checkStreams(t, snap)
		want := contextView(t, outs)
		got := slicesDeleteFunc(contextView(t, snap), func(s string) bool {
			return strings.HasPrefix(s, "tool_result:") && strings.Contains(s, `"status":"partial"`)
		})
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("partialEvery %d changed the context view (-without +with):\n%s", n, diff)
		}
	})
}

// shapes draws choices from fuzz bytes.
type shapes struct {
	data []byte
	pos  int
}

func (g *shapes) more() bool { return g.pos < len(g.data) }

func (g *shapes) next() int {
	if g.pos >= len(g.data) {
		return 0
	}
	b := g.data[g.pos]
	g.pos++
	return int(b)
}

func (g *shapes) pick(options ...string) string { return options[g.next()%len(options)] }

// values every member may take: each JSON type, and values that are valid
// for one field and wrong for another.
var values = []string{
	`null`, `""`, `"x"`, `"_"`, `"_acme"`, `"/w/proj/a.go"`, `"/w/proj"`, `"rel/a.go"`, `"/w/proj/a\\..\\b"`, `"C:\\w\\a"`,
	`0`, `1`, `-1`, `1.5`, `1e3`, `true`, `{}`, `[]`, `[1]`, `[null]`, `"completed"`, `"failed"`, `"cancelled"`,
	`"in_progress"`, `"pending"`, `"idle"`, `"running"`, `"requires_action"`, `"end_turn"`, `"error"`, `"form"`, `"url"`,
	`"move"`, `"add"`, `"s1"`, `"s2"`, `"m1"`, `"t1"`, `"aGk="`, `"%%%"`,
	`{"type":"text","text":"hi"}`, `{"type":"text"}`, `{"text":"x"}`, `{"type":""}`, `{"type":"image","data":"AA=="}`,
	`{"type":"image","data":"AA==","mimeType":"image/png"}`, `{"type":"resource","resource":{"uri":"u"}}`,
	`{"type":"resource_link","name":"n","uri":"u","size":2.5}`, `{"type":"reasoning"}`, `{"type":"text","text":"a","annotations":5}`,
	`[{"type":"text","text":"hi"}]`, `[{"type":"text"},{"type":"text","text":"b"},7]`,
	`[{"type":"content","content":{"type":"text","text":"c"}}]`, `[{"type":"content","content":{"x":1}}]`,
	`[{"type":"diff","changes":[{"operation":"move","path":"/w/proj/b"}]}]`,
	`[{"type":"diff","changes":[{"operation":"add","path":"rel"},{"path":"/w/proj/c"},{"operation":5}],"patch":{"text":"t"}}]`,
	`[{"type":"diff","changes":[{"operation":"modify","path":"/w/proj/d","_meta":{"k":1}}],"patch":{"format":"_v","text":"t"}}]`,
	`[{"type":"terminal","terminalId":"term"}]`, `[{"type":"terminal"}]`, `[{"type":"_vendor"}]`,
	`[{"path":"/w/proj/a","line":2}]`, `[{"path":"rel","line":-3}]`, `[{"path":"/x","line":1.5}]`, `[{"line":1}]`,
	`{"type":"items","planId":"p","entries":[{"content":"a"},1]}`, `{"type":"items","planId":"p"}`, `{"type":"file","planId":"p"}`,
	`{"exitCode":1}`, `{"exitCode":1.5,"signal":3}`, `{"signal":"SIGKILL"}`, `{"data":"aGk="}`, `{"data":"%%"}`,
	`{"amount":1,"currency":"USD"}`, `{"amount":"1","currency":""}`, `{"code":1,"message":"m"}`,
	`[{"configId":"c","category":"mode","currentValue":"code"},null]`, `[{"category":"model","currentValue":5}]`,
	`{"traceparent":"00-x","k":null}`, `{"timestamp":"2026-01-01T00:00:00Z"}`, `{"timestamp":"0000-01-01T00:00:00Z"}`,
	`[{"optionId":"o","name":"O","kind":"allow_once"},1]`, `{"type":"tool_call","toolCall":{"toolCallId":"t1"}}`,
	`{"type":"command","command":"ls","cwd":"/w"}`, `{"type":"start"}`,
}

// members every update may carry: all the ones the engine reads.
var members = []string{
	"messageId", "content", "toolCallId", "name", "title", "kind", "status", "locations", "rawInput", "rawOutput",
	"terminalId", "command", "cwd", "output", "exitStatus", "data", "plan", "planId", "compactionId", "summary", "error",
	"used", "size", "cost", "configOptions", "severity", "description", "sessionId", "senderSessionId",
	"recipientSessionId", "state", "stopReason", "_meta", "updatedAt", "currentModeId",
}

var kinds = []string{
	"user_message", "user_message_chunk", "agent_message", "agent_message_chunk", "agent_thought", "agent_thought_chunk",
	"tool_call_update", "tool_call_content_chunk", "state_update", "terminal_update", "terminal_output_chunk",
	"plan_update", "plan_removed", "compaction_update", "compaction_summary_chunk", "usage_update",
	"session_info_update", "config_option_update", "notice", "available_commands_update", "subagent_update",
	"session_message", "session_message_chunk", "current_mode_update", "_vendor",
}

func (g *shapes) object(n int) string {
	var b strings.Builder
	b.WriteByte('{')
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		k := members[g.next()%len(members)]
		if seen[k] {
			continue
		}
		seen[k] = true
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(k) + ":" + values[g.next()%len(values)])
	}
	return b.String()
}

func (g *shapes) update() string {
	kind := kinds[g.next()%len(kinds)]
	body := g.object(g.next() % 8)
	if body != "{" {
		body += ","
	}
	return body + `"sessionUpdate":` + strconv.Quote(kind) + "}"
}

// line draws one wire line.
func (g *shapes) line() string {
	id := strconv.Itoa(g.next() % 6)
	session := g.pick(`"s1"`, `"s1"`, `"s1"`, `"s2"`, `"child"`)
	switch g.next() % 16 {
	case 0:
		return `c2a {"jsonrpc":"2.0","id":` + id + `,"method":"session/prompt","params":{"sessionId":` + session + `,"prompt":` + values[g.next()%len(values)] + `}}`
	case 1:
		return `a2c {"jsonrpc":"2.0","id":` + id + `,"result":{"messageId":` + values[g.next()%len(values)] + `}}`
	case 2:
		return `a2c {"jsonrpc":"2.0","id":` + id + `,"method":"session/request_permission","params":{"sessionId":` + session + `,"title":"t","options":` + values[g.next()%len(values)] + `,"subject":` + values[g.next()%len(values)] + `}}`
	case 3:
		return `c2a {"jsonrpc":"2.0","id":` + id + `,"result":{"outcome":` + g.pick(`{"outcome":"selected","optionId":"o"}`, `{"outcome":"cancelled"}`, `{"outcome":"_v"}`, `{"outcome":"weird"}`, `{}`) + `,"action":` + g.pick(`"accept"`, `"decline"`, `"cancel"`, `"shrug"`, `"_v"`, `"_"`) + `,"content":` + values[g.next()%len(values)] + `}}`
	case 4:
		return `a2c {"jsonrpc":"2.0","id":` + id + `,"method":"elicitation/create","params":{"sessionId":` + session + `,"mode":` + values[g.next()%len(values)] + `,"message":"m","elicitationId":` + g.pick(`"e1"`, `null`, `5`) + `,"requestedSchema":` + values[g.next()%len(values)] + `,"toolCallId":` + values[g.next()%len(values)] + `}}`
	case 5:
		return `c2a {"jsonrpc":"2.0","id":` + id + `,"method":"session/resume","params":{"sessionId":` + session + `,"cwd":` + values[g.next()%len(values)] + `,"replayFrom":{"type":"start"}}}`
	case 6:
		return `a2c {"jsonrpc":"2.0","id":` + id + `,"result":{}}`
	case 7:
		return `c2a {"jsonrpc":"2.0","id":` + id + `,"method":"session/fork","params":{"sessionId":` + session + `,"cwd":"/w/proj"}}`
	case 8:
		return `a2c {"jsonrpc":"2.0","id":` + id + `,"result":{"sessionId":` + g.pick(`"f1"`, `"s1"`, `""`) + `}}`
	case 9:
		return `c2a {"jsonrpc":"2.0","id":` + id + `,"method":"session/close","params":{"sessionId":` + session + `}}`
	case 10:
		return `a2c {"jsonrpc":"2.0","method":"elicitation/complete","params":{"elicitationId":"e1"}}`
	case 11:
		return `a2c {"jsonrpc":"2.0","id":` + id + `,"error":{"code":-1,"message":"no"}}`
	case 12:
		return `gap a2c 1 10 lost`
	}
	return `a2c {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":` + session + `,"update":` + g.update() + `}}`
}
