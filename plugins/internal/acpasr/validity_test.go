package acpasr

import (
	"strings"
	"testing"
)

// TestMalformedStaysValidASR: updates a fuzzer once turned into records
// that fail the ASR schema (content blocks without a type or text, file
// changes without the paths their operation needs, relative paths, status
// and mode values ACP reserves, numbers of the wrong kind, arrays of
// non-objects) now give valid streams, each with the mapping this test
// names.
func TestMalformedStaysValidASR(t *testing.T) {
	perm := func(opts string) string {
		return `a2c {"jsonrpc":"2.0","id":5,"method":"session/request_permission","params":{"sessionId":"s1","title":"t","options":` + opts + `}}`
	}
	elicit := `a2c {"jsonrpc":"2.0","id":6,"method":"elicitation/create","params":{"sessionId":"s1","mode":"carrier-pigeon","message":"?"}}`
	tests := []struct {
		name  string
		lines []string
		check func(t *testing.T, rs []rec)
	}{
		{"chunk block without type is audited", []string{upd(`{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"text":"x"}}`), idle},
			func(t *testing.T, rs []rec) {
				if len(ofType(rs, "message")) != 0 || len(ofType(rs, "org.agent-session.acp/agent_message_chunk")) != 1 {
					t.Errorf("types = %v", types(rs))
				}
			}},
		{"text block without text is dropped", []string{upd(`{"sessionUpdate":"agent_message","messageId":"m","content":[{"type":"text"},{"type":"text","text":"ok"}]}`), idle},
			func(t *testing.T, rs []rec) {
				if got := js(ofType(rs, "message")[0]["content"]); got != `[{"text":"ok","type":"text"}]` {
					t.Errorf("content = %s", got)
				}
			}},
		{"prompt blocks without their members are dropped", []string{
			`c2a {"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"image"},{"type":"resource","resource":{"uri":"file:///a"}},{"type":"resource_link","name":"a","uri":"u","size":1.5},{"type":"text","text":"hi"}]}}`,
			`a2c {"jsonrpc":"2.0","id":9,"result":{"messageId":"u1"}}`, idle},
			func(t *testing.T, rs []rec) {
				if got := js(ofType(rs, "message")[0]["content"]); got != `[{"text":"hi","type":"text"}]` {
					t.Errorf("content = %s", got)
				}
			}},
		{"tool display block without type is dropped", []string{upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"completed","content":[{"type":"content","content":{"text":"x"}}],"rawOutput":1}`)},
			func(t *testing.T, rs []rec) {
				if r := ofType(rs, "tool_result")[0]; r["displayContent"] != nil {
					t.Errorf("displayContent = %s", js(r["displayContent"]))
				}
			}},
		{"changes without the paths their operation needs are dropped", []string{upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"completed","content":[{"type":"diff","changes":[{"operation":"move","path":"/w/proj/b"},{"operation":"add","path":"rel/a.go"},{"path":"/w/proj/c"},{"operation":"copy","oldPath":"/w/proj/a","path":"/w/proj/a2"},{"operation":"_vendor_op"}]}]}`)},
			func(t *testing.T, rs []rec) {
				want := `[{"oldPath":{"path":"a","root":"root0"},"op":"copy","path":{"path":"a2","root":"root0"}},{"op":"_vendor_op"}]`
				if got := js(ofType(rs, "file_change")[0]["changes"]); got != want {
					t.Errorf("changes = %s\nwant %s", got, want)
				}
			}},
		{"a remainder that is not clean in either separator is absolute", []string{upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"completed","locations":[{"path":"/w/proj/a\\..\\b"},{"path":"src/x.go"},{"path":"/w/proj/y","line":-1},{"path":"/w/proj/z","line":2.0}]}`)},
			func(t *testing.T, rs []rec) {
				want := `[{"path":{"path":"/w/proj/a\\..\\b","root":null}},{"path":{"path":"y","root":"root0"}},{"line":2.0,"path":{"path":"z","root":"root0"}}]`
				if got := js(ofType(rs, "tool_call")[0]["locations"]); got != strings.ReplaceAll(want, "2.0", "2") {
					t.Errorf("locations = %s", got)
				}
			}},
		{"compaction statuses reserved by ACP become unknown", []string{
			upd(`{"sessionUpdate":"compaction_update","compactionId":"c1","status":"squashing"}`),
			upd(`{"sessionUpdate":"compaction_update","compactionId":"c2","status":"_acme_squash"}`),
			upd(`{"sessionUpdate":"compaction_update","compactionId":"c3","status":"_"}`),
			upd(`{"sessionUpdate":"compaction_summary_chunk","compactionId":"c4","content":{"type":"text"}}`), idle},
			func(t *testing.T, rs []rec) {
				var got []string
				for _, r := range ofType(rs, "compaction") {
					got = append(got, str(r["compactionId"])+"="+str(r["status"]))
				}
				if strings.Join(got, " ") != "c1=unknown c2=_acme_squash c3=unknown" {
					t.Errorf("compactions = %v", got)
				}
			}},
		{"elicitation mode and action reserved by ACP", []string{elicit, `c2a {"jsonrpc":"2.0","id":6,"result":{"action":"shrug"}}`},
			func(t *testing.T, rs []rec) {
				r := ofType(rs, "input_request")[0]
				if r["mode"] != nil || r["status"] != "unknown" {
					t.Errorf("input_request = %s", js(r))
				}
			}},
		{"tool status _ alone is not a vendor value", []string{upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"_","rawOutput":1}`), idle},
			func(t *testing.T, rs []rec) {
				if r := ofType(rs, "tool_result")[0]; r["status"] != "unknown" {
					t.Errorf("status = %v", r["status"])
				}
			}},
		{"numbers that must be integers", []string{
			upd(`{"sessionUpdate":"usage_update","used":1.5,"size":10}`),
			upd(`{"sessionUpdate":"usage_update","used":-1,"size":10}`),
			upd(`{"sessionUpdate":"usage_update","used":1,"size":10,"cost":{"amount":1,"currency":""}}`),
			upd(`{"sessionUpdate":"terminal_update","terminalId":"x","cwd":"rel","exitStatus":{"exitCode":1.5}}`), idle},
			func(t *testing.T, rs []rec) {
				if n := len(ofType(rs, "org.agent-session.acp/usage_update")); n != 2 {
					t.Errorf("%d usage updates audited, want 2", n)
				}
				if u := ofType(rs, "usage_summary"); len(u) != 1 || u[0]["cost"] != nil {
					t.Errorf("usage = %s", js(u))
				}
				if tm := ofType(rs, "terminal")[0]; tm["cwd"] != nil || tm["exitCode"] != nil || tm["status"] != "exited" {
					t.Errorf("terminal = %s", js(tm))
				}
			}},
		{"arrays of objects keep only objects", []string{perm(`[1,{"optionId":"a","name":"A","kind":"allow_once"}]`),
			upd(`{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p","entries":["x",{"content":"c","priority":"high","status":"pending"}]}}`),
			upd(`{"sessionUpdate":"config_option_update","configOptions":[null,{"configId":"m","category":"mode","currentValue":"code"}]}`), idle},
			func(t *testing.T, rs []rec) {
				if got := js(ofType(rs, "permission")[0]["options"]); got != `[{"kind":"allow_once","name":"A","optionId":"a"}]` {
					t.Errorf("options = %s", got)
				}
				if got := js(ofType(rs, "plan")[0]["entries"]); got != `[{"content":"c","priority":"high","status":"pending"}]` {
					t.Errorf("entries = %s", got)
				}
				if c := ofType(rs, "config_change")[0]; js(c["options"]) != `[{"category":"mode","configId":"m","currentValue":"code"}]` || c["mode"] != "code" {
					t.Errorf("config = %s", js(c))
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outs := mapAll(t, startReq(""), parseFrames(t, opened(tt.lines...)))
			checkValid(t, outs)
			checkStreams(t, outs)
			tt.check(t, records(t, outs, "s1"))
		})
	}
}

// TestIsInt: JSON numbers that are integers, as the ASR schema's
// "integer" means.
func TestIsInt(t *testing.T) {
	for in, want := range map[string]bool{
		"0": true, "-3": true, "2.0": true, "1e3": true, "1200e-2": true, "0e-5": true, "-0": true,
		"1.5": false, "10e-2": false, "1e-1": false, "1e99999": false, `"1"`: false, "": false,
	} {
		if got := isInt([]byte(in)); got != want {
			t.Errorf("isInt(%s) = %v, want %v", in, got, want)
		}
	}
	for in, want := range map[string]bool{"0": true, "-0": true, "-0.0e5": true, "3": true, "-1": false, "-10e-1": false} {
		if got := isUint([]byte(in)); got != want {
			t.Errorf("isUint(%s) = %v, want %v", in, got, want)
		}
	}
}
