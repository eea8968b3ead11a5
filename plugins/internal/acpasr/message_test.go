package acpasr

import (
	"context"
	"testing"
)

const (
	chunkA = `{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"a"}}`
	chunkB = `{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"b"}}`
)

// TestASR704_ChunksFoldWithAssembly: ACP's patch rule per messageId, chunks
// joined by concatenation, assembly chunks or folded.
func TestASR704_ChunksFoldWithAssembly(t *testing.T) {
	tests := []struct {
		name     string
		updates  []string
		content  string
		assembly string
	}{
		{"chunks concatenate", []string{chunkA, chunkB}, `[{"text":"ab","type":"text"}]`, "chunks"},
		{"whole upsert", []string{`{"sessionUpdate":"agent_message","messageId":"m","content":[{"type":"text","text":"x"},{"type":"text","text":"y"}]}`},
			`[{"text":"x","type":"text"},{"text":"y","type":"text"}]`, "folded"},
		{"whole upsert replaces chunks", []string{chunkA, chunkB, `{"sessionUpdate":"agent_message","messageId":"m","content":[{"type":"text","text":"Z"}]}`},
			`[{"text":"Z","type":"text"}]`, "folded"},
		{"chunk after an upsert appends", []string{`{"sessionUpdate":"agent_message","messageId":"m","content":[{"type":"text","text":"Hello"}]}`,
			`{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":" world"}}`}, `[{"text":"Hello world","type":"text"}]`, "chunks"},
		{"empty content resets", []string{chunkA, `{"sessionUpdate":"agent_message","messageId":"m","content":[]}`, chunkB}, `[{"text":"b","type":"text"}]`, "chunks"},
		{"null content clears", []string{chunkA, `{"sessionUpdate":"agent_message","messageId":"m","content":null}`}, `[]`, "folded"},
		{"omitted content is unchanged", []string{chunkA, `{"sessionUpdate":"agent_message","messageId":"m"}`}, `[{"text":"a","type":"text"}]`, "chunks"},
		{"non-text blocks stay whole", []string{chunkA,
			`{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"image","data":"AA==","mimeType":"image/png"}}`, chunkB},
			`[{"text":"a","type":"text"},{"data":"AA==","mimeType":"image/png","type":"image"},{"text":"b","type":"text"}]`, "chunks"},
		{"annotated text is not joined", []string{chunkA,
			`{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"b","annotations":{"priority":1}}}`},
			`[{"text":"a","type":"text"},{"annotations":{"priority":1},"text":"b","type":"text"}]`, "chunks"},
		{"thought and message share an id", []string{`{"sessionUpdate":"agent_thought_chunk","messageId":"m","content":{"type":"text","text":"hmm"}}`, chunkA},
			`[{"text":"hmm","type":"reasoning"},{"text":"a","type":"text"}]`, "chunks"},
		{"thought upsert replaces thought chunks", []string{`{"sessionUpdate":"agent_thought_chunk","messageId":"m","content":{"type":"text","text":"x"}}`,
			`{"sessionUpdate":"agent_thought","messageId":"m","content":[{"type":"text","text":"one "},{"type":"text","text":"two"}]}`},
			`[{"text":"one two","type":"reasoning"}]`, "folded"},
		{"empty thought upsert resets it", []string{`{"sessionUpdate":"agent_thought_chunk","messageId":"m","content":{"type":"text","text":"x"}}`,
			`{"sessionUpdate":"agent_thought","messageId":"m","content":[]}`}, `[]`, "folded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var lines []string
			for _, u := range tt.updates {
				lines = append(lines, upd(u))
			}
			msgs := ofType(records(t, mapAll(t, startReq(""), parseFrames(t, opened(append(lines, idle)...))), "s1"), "message")
			if len(msgs) != 1 {
				t.Fatalf("%d messages, want 1: %s", len(msgs), js(msgs))
			}
			if got := js(msgs[0]["content"]); got != tt.content {
				t.Errorf("content = %s\nwant      %s", got, tt.content)
			}
			if msgs[0]["assembly"] != tt.assembly {
				t.Errorf("assembly = %v, want %s", msgs[0]["assembly"], tt.assembly)
			}
		})
	}
}

// TestASR704_Roles: user kinds give role user, agent kinds assistant.
func TestASR704_Roles(t *testing.T) {
	msgs := ofType(records(t, mapAll(t, startReq(""), parseFrames(t, opened(
		upd(`{"sessionUpdate":"user_message_chunk","messageId":"u","content":{"type":"text","text":"hi"}}`),
		upd(`{"sessionUpdate":"agent_thought","messageId":"th","content":[{"type":"text","text":"t"}]}`),
		upd(chunkA), idle))), "s1"), "message")
	for i, want := range []string{"user", "assistant", "assistant"} {
		if msgs[i]["role"] != want || msgs[i]["origin"] != nil || msgs[i]["author"] != nil {
			t.Errorf("message %d = %s, want role %s and no origin or author", i, js(msgs[i]), want)
		}
	}
}

// TestASR713_PromptMessage: the prompt's content and the response's
// messageId make a user message with origin prompt; an echo is the same
// entity.
func TestASR713_PromptMessage(t *testing.T) {
	prompt := `c2a {"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"Fix it"},{"type":"resource_link","name":"a.go","uri":"file:///w/proj/a.go"}]}}`
	resp := `a2c {"jsonrpc":"2.0","id":2,"result":{"messageId":"u1"}}`
	echoChunk := upd(`{"sessionUpdate":"user_message_chunk","messageId":"u1","content":{"type":"text","text":"Fix it (echo)"}}`)
	tests := []struct {
		name, config string
		lines        []string
		want         string // the message, or "" for none
	}{
		{"prompt alone", "", []string{prompt, resp, idle},
			`{"assembly":"folded","content":[{"text":"Fix it","type":"text"},{"name":"a.go","type":"resource_link","uri":"file:///w/proj/a.go"}],"id":"r1","messageId":"u1","native":{"ref":{"frames":[5,6],"wire":"wire/c-test.jsonl"}},"origin":"prompt","role":"user","seq":1,"ts":"2026-10-26T14:30:41.211Z","tsSource":"recorder","type":"message"}`},
		{"echo chunk after the response replaces the prompt content", "", []string{prompt, resp, echoChunk, idle},
			`{"assembly":"chunks","content":[{"text":"Fix it (echo)","type":"text"}],"id":"r1","messageId":"u1","native":{"ref":{"frames":[5,6,7],"wire":"wire/c-test.jsonl"}},"origin":"prompt","role":"user","seq":1,"ts":"2026-10-26T14:30:41.211Z","tsSource":"recorder","type":"message"}`},
		{"echo before the response keeps the echo content", "", []string{prompt, echoChunk, resp, idle},
			`{"assembly":"chunks","content":[{"text":"Fix it (echo)","type":"text"}],"id":"r1","messageId":"u1","native":{"ref":{"frames":[5,6,7],"wire":"wire/c-test.jsonl"}},"origin":"prompt","role":"user","seq":1,"ts":"2026-10-26T14:30:41.211Z","tsSource":"recorder","type":"message"}`},
		{"configured human author", `{"humanPrompts":true}`, []string{prompt, resp, idle},
			`{"assembly":"folded","author":"human","content":[{"text":"Fix it","type":"text"},{"name":"a.go","type":"resource_link","uri":"file:///w/proj/a.go"}],"id":"r1","messageId":"u1","native":{"ref":{"frames":[5,6],"wire":"wire/c-test.jsonl"}},"origin":"prompt","role":"user","seq":1,"ts":"2026-10-26T14:30:41.211Z","tsSource":"recorder","type":"message"}`},
		{"JSON-RPC error: not inserted, no record", "", []string{prompt, `a2c {"jsonrpc":"2.0","id":2,"error":{"code":-32800,"message":"cancelled"}}`, idle}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs := ofType(records(t, mapAll(t, startReq(tt.config), parseFrames(t, opened(tt.lines...))), "s1"), "message")
			switch {
			case tt.want == "" && len(msgs) != 0:
				t.Errorf("messages = %s, want none", js(msgs))
			case tt.want != "" && (len(msgs) != 1 || js(msgs[0]) != tt.want):
				t.Errorf("messages = %s\nwant %s", js(msgs), tt.want)
			}
		})
	}
}

// TestASR705_MessagesFinalAtTurnEnd: a message is written at the next idle
// or requires_action, at session/close, or at Finish; not at running.
func TestASR705_MessagesFinalAtTurnEnd(t *testing.T) {
	ends := map[string]string{
		"idle":            idle,
		"requires_action": upd(`{"sessionUpdate":"state_update","state":"requires_action"}`),
		"close":           `c2a {"jsonrpc":"2.0","id":9,"method":"session/close","params":{"sessionId":"s1"}}` + "\n" + `a2c {"jsonrpc":"2.0","id":9,"result":{}}`,
		"finish":          "",
	}
	for name, end := range ends {
		t.Run(name, func(t *testing.T) {
			sess, err := newMapper().Start(context.Background(), startReq(""))
			if err != nil {
				t.Fatal(err)
			}
			before, _ := sess.Map(context.Background(), parseFrames(t, opened(upd(chunkA), upd(`{"sessionUpdate":"state_update","state":"running"}`))))
			if n := len(ofType(records(t, before, "s1"), "message")); n != 0 {
				t.Fatalf("message written before the turn ended")
			}
			var after = parseFrames(t, opened(upd(chunkA), upd(`{"sessionUpdate":"state_update","state":"running"}`), end))[6:]
			outs, _ := sess.Map(context.Background(), after)
			fin, _ := sess.Finish(context.Background(), "eof")
			if name == "finish" {
				outs = fin
			} else if len(ofType(records(t, fin, "s1"), "message")) != 0 {
				t.Errorf("message written again at Finish")
			}
			if n := len(ofType(records(t, outs, "s1"), "message")); n != 1 {
				t.Errorf("%d messages at %s, want 1", n, name)
			}
		})
	}
}

// TestASR706_SupersedingAfterFinal: a change after the final record is a
// new record that supersedes it; an identical repeat writes nothing.
func TestASR706_SupersedingAfterFinal(t *testing.T) {
	rs := records(t, mapAll(t, startReq(""), parseFrames(t, opened(
		upd(chunkA), idle,
		upd(`{"sessionUpdate":"agent_message","messageId":"m"}`), idle, // changes nothing
		upd(chunkB), idle,
	))), "s1")
	msgs := ofType(rs, "message")
	if len(msgs) != 2 {
		t.Fatalf("messages = %s, want 2", js(msgs))
	}
	if msgs[1]["supersedes"] != msgs[0]["id"] || js(msgs[1]["content"]) != `[{"text":"ab","type":"text"}]` {
		t.Errorf("second revision = %s", js(msgs[1]))
	}
	if msgs[1]["ts"] != msgs[0]["ts"] {
		t.Errorf("a revision keeps the entity's ts: %v vs %v", msgs[1]["ts"], msgs[0]["ts"])
	}
}

// TestASR713_PromptErrorAudited: a session/prompt answered with a JSON-RPC
// error makes no message (the seed's "no record": it was not inserted),
// but the failure is not invisible: an audit-only record
// org.agent-session.acp/session_prompt_error holds the error response.
func TestASR713_PromptErrorAudited(t *testing.T) {
	prompt := `c2a {"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}]}}`
	refused := `a2c {"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"Authentication required"}}`
	recs := records(t, mapAll(t, startReq(""), parseFrames(t, opened(prompt, refused))), "s1")
	if msgs := ofType(recs, "message"); len(msgs) != 0 {
		t.Errorf("messages = %s, want none", js(msgs))
	}
	audits := ofType(recs, "org.agent-session.acp/session_prompt_error")
	if len(audits) != 1 || js(audits[0]["native"].(map[string]any)["record"]) != `{"error":{"code":-32000,"message":"Authentication required"},"id":2,"jsonrpc":"2.0"}` {
		t.Errorf("audit records = %s", js(audits))
	}
}
