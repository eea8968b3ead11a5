package aep

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/acptap/acptap/sdk"
	mt "github.com/acptap/acptap/sdk/mappertest"
)

// The fast path (fast.go) against the map-based one: the same frames
// through two conns, one with the fast path off, must give the same
// outputs, batch by batch, byte for byte.

// diffConfigs are the configurations the fast path is compared under:
// deltas off (the default), on at the redacted ceiling with secrets to
// redact, on at full, on below redacted, and the connection lane.
func diffConfigs() map[string]Config {
	secrets := RedactConfig{Home: "/home/tester", Values: []string{"abc123secret"}, Names: []string{"API_TOKEN"}}
	return map[string]Config{
		"default":  defaultCfg(),
		"redacted": {Host: "host", Redact: secrets, Deltas: ptr(true)},
		"full":     {Host: "host", Redact: secrets, Deltas: ptr(true), Capture: map[string]string{"deltas": "full"}},
		"metadata": {Host: "host", Redact: secrets, Deltas: ptr(true), Capture: map[string]string{"deltas": "metadata"}},
		"lane":     {Host: "host", Redact: secrets, Deltas: ptr(true), ConnectionLane: true},
		"all-full": {Host: "host", Redact: secrets, Deltas: ptr(true), Capture: map[string]string{"default": "full", "x": "full", "deltas": "full"}},
		"all-red":  {Host: "host", Redact: secrets, Capture: map[string]string{"default": "redacted"}},
	}
}

// startPair starts two conns of one configuration: the first maps
// everything the map-based way.
func startPair(t testing.TB, cfg Config, input string) (slow, fast *conn) {
	t.Helper()
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req := sdk.StartRequest{Config: raw, Connection: "c-diff", Input: input, Mode: sdk.ModeRecord}
	var cs [2]*conn
	for i := range cs {
		s, err := New().Start(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		cs[i] = s.(*conn)
	}
	cs[0].slowOnly = true
	return cs[0], cs[1]
}

// diffFrames maps frames through both paths in batches of batch and
// fails on the first batch whose outputs differ.
func diffFrames(t testing.TB, cfg Config, input string, frames []sdk.Frame, batch int) {
	t.Helper()
	slow, fast := startPair(t, cfg, input)
	ctx := context.Background()
	for i := 0; i < len(frames); i += batch {
		fs := frames[i:min(i+batch, len(frames))]
		a, _ := slow.Map(ctx, append([]sdk.Frame(nil), fs...))
		b, _ := fast.Map(ctx, append([]sdk.Frame(nil), fs...))
		if !reflect.DeepEqual(a, b) {
			var in strings.Builder
			for _, f := range fs {
				fmt.Fprintf(&in, "  %v %s\n", f.Dir, f.Data)
			}
			t.Fatalf("frames %d..%d: the fast path differs\ninput:\n%sslow:\n%s\nfast:\n%s", i, i+len(fs)-1, in.String(), dumpOuts(a), dumpOuts(b))
		}
	}
	a, _ := slow.Finish(ctx, "eof")
	b, _ := fast.Finish(ctx, "eof")
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("Finish: the fast path differs\nslow:\n%s\nfast:\n%s", dumpOuts(a), dumpOuts(b))
	}
}

func dumpOuts(outs []sdk.Output) string {
	var b strings.Builder
	for _, o := range outs {
		fmt.Fprintf(&b, "  %v %s %s %v %v %s %s\n", o.Kind, o.Session, o.JSON, o.FrameSeqs, o.Severity, o.Summary, o.Detail)
	}
	return b.String()
}

// TestFastPathGoldenInputs: the SDK traces of the goldens, under every
// configuration and input.
func TestFastPathGoldenInputs(t *testing.T) {
	for _, name := range []string{"v1-everything", "v2-everything"} {
		frames := wire(nil, traceLines(t, "testdata/"+name+".trace.jsonl")...)
		for cname, cfg := range diffConfigs() {
			for _, input := range Inputs {
				t.Run(name+"/"+cname+"/"+input, func(t *testing.T) {
					diffFrames(t, cfg, input, frames, 7)
				})
			}
		}
	}
}

// genLines is a random session: the lines around the content streams
// that the map-based path maps, and content-stream updates of every shape
// (chunks of each kind, content as a block, an array, nested or of the
// wrong type, secrets and escapes in the text, traceparents, message ids,
// sessions named or not, a replay in progress) and some just outside what
// the fast path takes (an escaped name, a duplicate member, an id, the
// other direction, a sessionUpdate that is not a string).
func genLines(r *rand.Rand, n int) []mt.Line {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	texts := []string{`"hello"`, `"fix /home/tester/x with token=abc123secret"`, `"a\nb \"q\" \u00e9 \ud800 naïve"`, `"  "`, `""`,
		`"API_TOKEN=zz9 in /home/tester"`, `"line\\u0041"`, `5`, `null`, `"🙂 \t tab"`}
	block := func() string {
		switch r.IntN(8) {
		case 0:
			return `{"type":"image","data":"AAAA"}`
		case 1:
			return `{"type":"text"}`
		case 2:
			return `{"type":"content","content":{"type":"text","text":` + pick(texts...) + `}}`
		case 3:
			return `"text"`
		}
		return `{"type":"text","text":` + pick(texts...) + `}`
	}
	content := func() string {
		switch r.IntN(6) {
		case 0:
			return `[` + block() + `,` + block() + `,` + block() + `]`
		case 1:
			return `[]`
		case 2:
			return `{"type":"content","content":[` + block() + `,` + block() + `]}`
		}
		return block()
	}
	meta := func() string {
		switch r.IntN(5) {
		case 0:
			return `,"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}`
		case 1:
			return `,"_meta":{"traceparent":"bad"}`
		case 2:
			return `,"_meta":7`
		}
		return ""
	}
	sid := func() string {
		return pick(`"sessionId":"s1",`, `"sessionId":"s1",`, `"sessionId":"s2",`, ``, `"sessionId":3,`, `"sessionId":"s\u0031",`)
	}
	kinds := []string{"agent_message_chunk", "agent_thought_chunk", "user_message_chunk", "tool_call_content_chunk",
		"compaction_summary_chunk", "session_message_chunk", "user_message", "agent_message", "agent_thought", "session_message"}
	update := func() string {
		var fields []string
		kind := pick(kinds...)
		switch r.IntN(20) {
		case 0:
			kind = "terminal_output_chunk"
			fields = append(fields, `"data":`+pick(`"aGVsbG8gL2hvbWUvdGVzdGVyL3g="`, `"dG9rZW49YWJjMTIzc2VjcmV0"`, `"!!"`, `"/w=="`, `3`))
		case 1:
			kind = "vendor_thing"
		}
		k := `"sessionUpdate":"` + kind + `"`
		switch r.IntN(30) {
		case 0:
			k = `"sessionUpd\u0061te":"` + kind + `"`
		case 1:
			k = `"sessionUpdate":"agent_message\u005fchunk"`
		case 2:
			k = `"sessionUpdate":7`
		case 3:
			k = `"sessionUpdate":"` + kind + `","sessionUpdate":"plan"`
		}
		fields = append(fields, k)
		if r.IntN(4) != 0 {
			fields = append(fields, `"content":`+content())
		}
		if r.IntN(3) != 0 {
			fields = append(fields, `"messageId":`+pick(`"m1"`, `"m\"2"`, `4`))
		}
		r.Shuffle(len(fields), func(i, j int) { fields[i], fields[j] = fields[j], fields[i] })
		return `{` + strings.Join(fields, ",") + meta() + `}`
	}
	notif := func() string {
		head := pick(`"jsonrpc":"2.0","method":"session/update"`, `"method":"session/update","jsonrpc":"2.0"`)
		switch r.IntN(40) {
		case 0:
			head = `"jsonrpc":"2.0","method":"session\/update"`
		case 1:
			head = `"jsonrpc":"2.0","id":99,"method":"session/update"`
		case 2:
			head = `"jsonrpc":"2.0","method":"session/update","result":{}`
		}
		params := `{` + sid() + `"update":` + update() + meta() + `}`
		switch r.IntN(40) {
		case 0:
			params = `[1]`
		case 1:
			params = `{` + sid() + `"update":"x"}`
		}
		sp := pick(``, ``, ` `, "\t")
		return `{` + head + `,` + sp + `"params":` + sp + params + `}` + sp
	}
	l := []mt.Line{
		mt.C2A(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`),
		mt.A2C(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`),
		mt.C2A(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/home/tester/p"}}`),
		mt.A2C(`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}`),
	}
	id := 10
	for len(l) < n {
		switch r.IntN(30) {
		case 0:
			id++
			l = append(l, mt.C2A(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"hi token=abc123secret"}]}}`, id)))
		case 1:
			l = append(l, mt.A2C(`{"jsonrpc":"2.0","method":"session/update","params":{`+sid()+`"update":{"sessionUpdate":"state_update","state":"`+pick("running", "idle", "requires_action", "unknown")+`"`+
				pick(`,"stopReason":"end_turn"`, `,"stopReason":"error","error":{"code":-32000,"message":"token=abc123secret failed"}`, `,"stopReason":"cancelled"`, `,"stopReason":"refusal"`, ``, `,"stopReason":5`, `,"stopReason":"error","error":"x"`)+
				pick(``, `,"usage":{"inputTokens":12,"outputTokens":3.5e2,"cached":1}`, `,"usage":7`)+pick(``, `,"extra":{"a":[1,2]}`)+meta()+`}`+meta()+`}}`))
		case 7, 8:
			tool := pick(`"toolCallId":"t1"`, `"toolCallId":"t2"`, `"toolCallId":"t\u0033"`, `"toolCallId":""`, `"toolCallId":9`, ``,
				fmt.Sprintf(`"toolCallId":"n%d"`, r.IntN(1000)), fmt.Sprintf(`"toolCallId":"n%d"`, r.IntN(1000)))
			fields := []string{`"sessionUpdate":"` + pick("tool_call", "tool_call_update") + `"`}
			if tool != "" {
				fields = append(fields, tool)
			}
			for _, f := range []string{`"status":"` + pick("pending", "in_progress", "completed", "failed", "cancelled") + `"`, `"status":3`,
				`"title":"Read /home/tester/a.go"`, `"name":"read_file"`, `"kind":"read"`, `"kind":""`,
				`"rawInput":{"path":"/home/tester/a.go","token":"abc123secret","n":[1,2.50,{"x":null}]}`, `"rawInput":"cmd"`, `"rawInput":null`,
				`"rawOutput":{"bytes":1000,"text":"API_TOKEN=zz"}`, `"rawOutput":"failed at /home/tester/x with abc123secret"`, `"rawOutput":[1]`,
				`"content":[{"type":"content","content":{"type":"text","text":"big"}}]`, `"locations":[{"path":"/x","line":1}]`} {
				if r.IntN(4) == 0 {
					fields = append(fields, f)
				}
			}
			r.Shuffle(len(fields), func(i, j int) { fields[i], fields[j] = fields[j], fields[i] })
			l = append(l, mt.A2C(`{"jsonrpc":"2.0","method":"session/update","params":{`+sid()+`"update":{`+strings.Join(fields, ",")+meta()+`}}}`))
		case 2:
			l = append(l, mt.A2C(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"stopReason":"end_turn"}}`, id)))
		case 3:
			l = append(l, mt.A2C(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"read","status":"`+pick("pending", "completed")+`"}}}`))
		case 4:
			id++
			l = append(l, mt.C2A(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/load","params":{"sessionId":"s2","cwd":"/"}}`, id)))
		case 5:
			l = append(l, mt.A2C(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, id)))
		case 6:
			l = append(l, mt.C2A(notif())) // the client's direction: not the fast path
		case 10, 11:
			// Requests either way, of methods mapped and not, and their responses.
			id++
			method := pick("fs/read_text_file", "fs/write_text_file", "terminal/output", "session/set_mode", "session/cancel",
				"session/request_permission", "elicitation/create", "elicitation/complete", "session/new", "session/fork", "session/load",
				"session/resume", "session/close", "session/delete", "session/archive", "session/prompt", "x/vendor")
			params := `{` + sid() + pick(``, `"elicitationId":"e1",`, `"elicitationId":"e2",`) + `"path":"/home/tester/a.go","content":"package a\n// abc123secret\n","toolCall":{"toolCallId":"t1","title":"Edit"},"options":[{"optionId":"o"}],"mode":"` + pick("form", "url") + `","message":"m","requestedSchema":{"type":"object","properties":{"a":{"type":"string"}}},"cwd":"/home/tester/p","prompt":[{"type":"text","text":"p abc123secret"}]` + meta() + `}`
			if r.IntN(8) == 0 {
				params = pick(`[]`, `"x"`, `null`)
			}
			dir, back := mt.A2C, mt.C2A
			if r.IntN(2) == 0 {
				dir, back = mt.C2A, mt.A2C
			}
			if r.IntN(6) == 0 {
				l = append(l, dir(`{"jsonrpc":"2.0","method":"`+method+`","params":`+params+`}`)) // a notification
				break
			}
			l = append(l, dir(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"%s","params":%s}`, id, method, params)))
			result := pick(`{"content":"package a\nabc123secret"}`, `{"sessionId":"s3"`+meta()+`}`, `{"outcome":{"outcome":"selected","optionId":"o"}}`,
				`{"action":"accept","content":{"a":"v abc123secret"}}`, `{"stopReason":"end_turn","usage":{"inputTokens":1}`+meta()+`}`, `null`, `{}`, `[1]`)
			if r.IntN(5) == 0 {
				l = append(l, back(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-32000,"message":"e abc123secret"}}`, id)))
			} else {
				l = append(l, back(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":%s}`, id-r.IntN(2), result)))
			}
		case 12, 13:
			u := pick(`"sessionUpdate":"plan","entries":[{"content":"a","status":"completed"},{"status":"In Progress!"},{"status":""},7]`,
				`"sessionUpdate":"plan","plan":{"planId":"p2","entries":[{"status":"done"}]}`, `"sessionUpdate":"plan_update","entries":[{"status":"a"}]`,
				`"sessionUpdate":"plan_update","plan":{"planId":"p1","entries":[{"status":"pending"}]},"entries":[{"status":"x"}]`,
				`"sessionUpdate":"plan_update","plan":{"entries":"no"}`, `"sessionUpdate":"plan","entries":{}`,
				`"sessionUpdate":"usage_update","used":1000,"size":2e5,"cost":{"currency":"USD","amount":0.25}`,
				`"sessionUpdate":"usage_update","usedTokens":12,"outputTokens":"3","cost":{"amount":"x"}`, `"sessionUpdate":"usage_update","cost":[]`,
				`"sessionUpdate":"compaction_update","compactionId":"k1","status":"`+pick("completed", "started")+`"`,
				`"sessionUpdate":"compaction_update","compactionId":5,"status":"completed"`, `"sessionUpdate":"compaction_update"`,
				`"sessionUpdate":"available_commands_update","availableCommands":[{"name":"x"}]`, `"sessionUpdate":"config_option_update","configOptions":[]`,
				`"sessionUpdate":"current_mode_update","currentModeId":"ask"`, `"sessionUpdate":""`, `"sessionUpdate":"Weird/Kind_1"`, `"sessionUpdate":"v\u00e9ndor"`)
			l = append(l, mt.A2C(`{"jsonrpc":"2.0","method":"session/update","params":{`+sid()+`"update":{`+u+meta()+`}`+meta()+`}}`))
		case 9:
			head := pick(`{"jsonrpc":"2.0","method":5,"params":{}}`, `{"jsonrpc":"2.0","method":"x\u002fy","params":{"sessionId":"s1"}}`,
				`{"jsonrpc":"2.0","id":%d,"result":null}`, `{"jsonrpc":"2.0","id":%d,"error":"x"}`, `{"jsonrpc":"2.0","id":%d,"error":{"code":-1,"message":"m abc123secret"}}`,
				`{"jsonrpc":"2.0","id":%d}`, `{"jsonrpc":"2.0"}`, `[1,2]`, `"str"`, `7`, `{"jsonrpc":"2.0","id":null,"result":{}}`, `{"id":%d,"result":{},"error":{}}`,
				`{"id":%d,"method":"session/prompt","result":{},"params":{"sessionId":"s1","prompt":[]}}`, `{"jsonrpc":"2.0","id":"a\u0062","method":"session/prompt","params":{"sessionId":"s1"}}`,
				`{"jsonrpc":"2.0","id":%d,"result":{"stopReason":"end_turn"},"method":null}`, `{"jsonrpc":"2.0","id":1.0,"result":{"sessionId":"s2"}}`, `{"jsonrpc":"2.0","id":[1],"result":{}}`)
			if strings.Contains(head, "%d") {
				head = fmt.Sprintf(head, id-r.IntN(2))
			}
			if r.IntN(2) == 0 {
				l = append(l, mt.C2A(head))
			} else {
				l = append(l, mt.A2C(head))
			}
		default:
			l = append(l, mt.A2C(notif()))
		}
	}
	return l
}

// mutate applies a few random byte edits to line (JSON-significant bytes,
// invalid UTF-8, escapes).
func mutate(r *rand.Rand, line string) string {
	b := []byte(line)
	alphabet := []byte("{}[]\":,\\u0 \x00\x80\xff\xc3\xa9ntfe-.")
	for range 1 + r.IntN(3) {
		if len(b) == 0 {
			break
		}
		i := r.IntN(len(b))
		switch r.IntN(3) {
		case 0:
			b = append(b[:i], b[i+1:]...)
		case 1:
			b = append(b[:i], append([]byte{alphabet[r.IntN(len(alphabet))]}, b[i:]...)...)
		default:
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
	}
	return string(b)
}

// TestFastPathRandomSessions: random sessions, and the same with mutated
// lines (malformed ones among them), under every configuration.
func TestFastPathRandomSessions(t *testing.T) {
	for cname, cfg := range diffConfigs() {
		for _, input := range []string{"acp/1", "acp/2@2.0.0-alpha.9"} {
			t.Run(cname+"/"+input, func(t *testing.T) {
				for seed := range uint64(12) {
					r := rand.New(rand.NewPCG(seed, 7))
					lines := genLines(r, 300)
					diffFrames(t, cfg, input, wire(nil, lines...), 1+r.IntN(40))
					for i := range lines {
						if r.IntN(3) == 0 {
							lines[i].Data = mutate(r, lines[i].Data)
						}
					}
					diffFrames(t, cfg, input, wire(nil, lines...), 1+r.IntN(40))
				}
			})
		}
	}
}

// TestFastPathTakesTheUpdates: the frames the fast path is for (the agent's
// session/update notifications) do go that way (so that the differential
// tests compare something), and the ones it leaves do not.
func TestFastPathTakesTheUpdates(t *testing.T) {
	_, c := startPair(t, diffConfigs()["redacted"], "acp/2@2.0.0-alpha.9")
	for _, tc := range []struct {
		line string
		dir  sdk.Direction
		want bool
	}{
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}`, sdk.A2C, true},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"terminal_output_chunk","data":"eA=="}}}`, sdk.A2C, true},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk"}}}`, sdk.C2A, false},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"t"}}}`, sdk.A2C, true},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"state_update","state":"idle"}}}`, sdk.A2C, true},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"plan","entries":[]}}}`, sdk.A2C, true},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"vendor_x","a":1}}}`, sdk.A2C, true},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":7}}}`, sdk.A2C, false},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":"x"}}`, sdk.A2C, false},
		{`{"jsonrpc":"2.0","method":"session/update","params":[]}`, sdk.A2C, false},
		{`{"jsonrpc":"2.0","id":1,"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk"}}}`, sdk.A2C, false},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpd\u0061te":"agent_message_chunk"}}}`, sdk.A2C, false},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk"},"update":{}}}`, sdk.A2C, false},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk"}}`, sdk.A2C, false},
		{"{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"update\":{\"sessionUpdate\":\"agent_message_chunk\",\"x\":\"\xff\"}}}", sdk.A2C, false},
	} {
		f := sdk.Frame{Kind: sdk.KindLine, Seq: 1, Dir: tc.dir, At: base, Data: []byte(tc.line)}
		if got, _, _, _ := c.fastFrame(&f); got != tc.want {
			t.Errorf("fastFrame(%s %s) = %v, want %v", tc.dir, tc.line, got, tc.want)
		}
		if c.tape.B != nil {
			t.Errorf("the tape keeps the frame after %s", tc.line)
		}
	}
}

// TestFastPathRedacts: a delta mapped from the tape passes the redaction
// pipeline as the map-based one does: no secret, no home directory
// reaches an output at the redacted ceiling; at full the text is as sent.
func TestFastPathRedacts(t *testing.T) {
	lines := []mt.Line{
		mt.C2A(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/home/tester/p"}}`),
		mt.A2C(`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}`),
		mt.A2C(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"use token=abc123secret in /home/tester/x"}}}}`),
		mt.A2C(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_thought_chunk","content":[{"type":"text","text":"abc123secret"},{"type":"text","text":"API_TOKEN=k9"}]}}}`),
		mt.A2C(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"terminal_output_chunk","data":"dG9rZW49YWJjMTIzc2VjcmV0"}}}`),
	}
	for _, level := range []string{"redacted", "full"} {
		cfg := diffConfigs()[level]
		_, c := startPair(t, cfg, "acp/2@2.0.0-alpha.9")
		outs, _ := c.Map(context.Background(), wire(nil, lines...))
		var deltas int
		for _, o := range outs {
			if !bytes.Contains(o.JSON, []byte(`"delta"`)) {
				continue
			}
			deltas++
			leak := bytes.Contains(o.JSON, []byte("abc123secret")) || bytes.Contains(o.JSON, []byte("/home/tester"))
			if leak != (level == "full") {
				t.Errorf("%s: %s", level, o.JSON)
			}
		}
		if deltas != 3 {
			t.Errorf("%s: %d delta events, want 3", level, deltas)
		}
	}
}

// FuzzFastPath: any lines (one frame each; a leading '>' sends it from
// the client) map the same both ways, and never crash.
func FuzzFastPath(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 8 {
		var b strings.Builder
		for _, l := range genLines(r, 12) {
			if l.Dir == sdk.C2A {
				b.WriteByte('>')
			}
			b.WriteString(l.Data)
			b.WriteByte('\n')
		}
		f.Add(b.String())
	}
	cfgs := diffConfigs()
	f.Fuzz(func(t *testing.T, s string) {
		var lines []mt.Line
		for _, l := range strings.Split(s, "\n") {
			if d, ok := strings.CutPrefix(l, ">"); ok {
				lines = append(lines, mt.C2A(d))
			} else {
				lines = append(lines, mt.A2C(l))
			}
		}
		frames := wire(nil, lines...)
		for _, name := range []string{"default", "redacted", "lane"} {
			diffFrames(t, cfgs[name], "acp/2@2.0.0-alpha.9", frames, 5)
		}
	})
}

// TestFastPathSynthetic: the synthetic session of the memory benchmarks
// (prompts, permission and elicitation requests, tools, plans, usage,
// chunks), v1 and v2, deltas off and on.
func TestFastPathSynthetic(t *testing.T) {
	for _, v2 := range []bool{false, true} {
		g := newSynthetic(v2)
		frames := append([]sdk.Frame(nil), g.frames...)
		for range 120 {
			frames = append(frames, g.next()...)
		}
		frames = append(frames, g.close()...)
		input := "acp/1"
		if v2 {
			input = "acp/2@2.0.0-alpha.9"
		}
		for _, name := range []string{"default", "redacted", "full"} {
			diffFrames(t, diffConfigs()[name], input, frames, 64)
		}
	}
}

// TestFastPathSessionMethods: the session methods whose request's params
// the response reads (cwd, traceparent), and a URL-mode elicitation
// completed without a sessionId, in a fixed session, under every
// configuration: what the random sessions reach only by chance.
func TestFastPathSessionMethods(t *testing.T) {
	const tp = `"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}`
	const tp2 = `"_meta":{"traceparent":"00-1af7651916cd43dd8448eb211c80319c-c7ad6b7169203331-01"}`
	lines := []mt.Line{
		mt.C2A(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/home/tester/p",` + tp + `}}`),
		mt.A2C(`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1",` + tp2 + `}}`),
		mt.C2A(`{"jsonrpc":"2.0","id":2,"method":"session/fork","params":{"sessionId":"s1","cwd":"/home/tester/q",` + tp + `}}`),
		mt.A2C(`{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s2",` + tp2 + `}}`),
		mt.C2A(`{"jsonrpc":"2.0","id":3,"method":"session/resume","params":{"sessionId":"s3","cwd":"/home/tester/r"}}`),
		mt.A2C(`{"jsonrpc":"2.0","id":3,"result":{` + tp2 + `}}`),
		mt.C2A(`{"jsonrpc":"2.0","id":4,"method":"session/load","params":{"sessionId":"s4","cwd":"/home/tester/s",` + tp + `}}`),
		mt.A2C(`{"jsonrpc":"2.0","id":4,"result":{` + tp2 + `}}`),
		mt.A2C(`{"jsonrpc":"2.0","id":5,"method":"elicitation/create","params":{"sessionId":"s1","mode":"url","elicitationId":"e1","url":"https://example.com","message":"Sign in"}}`),
		mt.A2C(`{"jsonrpc":"2.0","method":"elicitation/complete","params":{"elicitationId":"e1"}}`),
		mt.C2A(`{"jsonrpc":"2.0","id":5,"result":{"action":"accept"}}`),
		mt.C2A(`{"jsonrpc":"2.0","id":6,"method":"session/close","params":{"sessionId":"s1",` + tp + `}}`),
		mt.A2C(`{"jsonrpc":"2.0","id":6,"result":{` + tp2 + `}}`),
		mt.C2A(`{"jsonrpc":"2.0","id":7,"method":"session/delete","params":{"sessionId":"s2",` + tp + `}}`),
		mt.A2C(`{"jsonrpc":"2.0","id":7,"result":{}}`),
		mt.C2A(`{"jsonrpc":"2.0","id":8,"method":"session/archive","params":{"sessionId":"s3",` + tp + `}}`),
		mt.A2C(`{"jsonrpc":"2.0","id":8,"result":{}}`),
		mt.C2A(`{"jsonrpc":"2.0","id":9,"method":"session/archive","params":{"sessionId":"s4"}}`),
		mt.A2C(`{"jsonrpc":"2.0","id":9,"error":{"code":-1,"message":"no"}}`),
	}
	frames := wire(nil, lines...)
	for name, cfg := range diffConfigs() {
		for _, input := range Inputs {
			t.Run(name+"/"+input, func(t *testing.T) { diffFrames(t, cfg, input, frames, 3) })
		}
	}
}
