package acpasr

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/acptap/acptap/sdk"
	"github.com/google/go-cmp/cmp"
)

// TestASR700_HeaderProducer: producer.method, source, name and plugin.
func TestASR700_HeaderProducer(t *testing.T) {
	h := records(t, mapAll(t, startReq(""), parseFrames(t, opened())), "s1")[0]
	want := `{"lossy":["inference","message.author","timestamps","usage"],"method":"recorder","name":"acptap","plugin":{"name":"acpv2","version":"0.1.0"},"source":{"format":"acp","formatVersion":"2.0.0-alpha.9"},"version":"0.1.0"}`
	if got := js(h["producer"]); got != want {
		t.Errorf("producer = %s\nwant %s", got, want)
	}
	if h["type"] != "header" || h["asr"] != "0.1" || h["createdAt"] != "2026-10-26T14:30:41.210Z" {
		t.Errorf("header = %v", js(h))
	}
}

// TestASR701_OneStreamPerSession: each session gets one header, before its
// records, with the sessionId verbatim; records go to their own session.
func TestASR701_OneStreamPerSession(t *testing.T) {
	frames := parseFrames(t, wire(initReq, initResp,
		`c2a {"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/a"}}`,
		`a2c {"jsonrpc":"2.0","id":1,"result":{"sessionId":"sess A/ü"}}`,
		`c2a {"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/b"}}`,
		`a2c {"jsonrpc":"2.0","id":2,"result":{"sessionId":"s2"}}`,
		`a2c {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s2","update":{"sessionUpdate":"state_update","state":"running"}}}`,
		`a2c {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess A/ü","update":{"sessionUpdate":"state_update","state":"running"}}}`,
	))
	outs := mapAll(t, startReq(""), frames)
	seen := map[string]bool{}
	for _, o := range outs {
		switch o.Kind {
		case sdk.ASRHeader:
			if seen[o.Session] {
				t.Errorf("second header for %q", o.Session)
			}
			seen[o.Session] = true
		case sdk.ASRRecord:
			if !seen[o.Session] {
				t.Errorf("record for %q before its header", o.Session)
			}
		}
	}
	for _, id := range []string{"sess A/ü", "s2"} {
		rs := records(t, outs, id)
		if len(rs) != 2 || rs[0]["sessionId"] != id || rs[1]["type"] != "state" || rs[1]["seq"] != 1.0 {
			t.Errorf("stream %q = %v", id, js(rs))
		}
	}
}

// TestASR703_AgentName: registry name, registry id, case-insensitive match,
// the configured reverse-DNS name, and the reserved fallback.
func TestASR703_AgentName(t *testing.T) {
	tests := []struct {
		name, info, config, want string
	}{
		{"registry display name", "Claude Code", "", "claude-code-acp"},
		{"registry id", "gemini", "", "gemini"},
		{"case-insensitive display name", "codex cli", "", "codex-acp"},
		{"configured name wins", "Claude Code", `{"agentName":"com.example.agent"}`, "com.example.agent"},
		{"fallback label", "  My Agent++ v2 (beta) ", "", "org.agent-session.acp.my-agent-v2-beta"},
		{"fallback non-ASCII", "Agënt", "", "org.agent-session.acp.ag-nt"},
		{"fallback with nothing left", "!!!", "", "org.agent-session.acp.unnamed"},
		{"registry from config replaces the default", "Claude Code", `{"registry":{"agents":[{"id":"dev.acme.claude","name":"Claude Code"}]}}`, "dev.acme.claude"},
		{"config registry without the agent", "Gemini CLI", `{"registry":{"agents":[]}}`, "org.agent-session.acp.gemini-cli"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := `a2c {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2,"info":{"name":` + js(tt.info) + `,"version":"9.9"}}}`
			h := records(t, mapAll(t, startReq(tt.config), parseFrames(t, wire(initReq, resp, newReq, newResp))), "s1")[0]
			if got := js(h["agent"]); got != `{"name":"`+tt.want+`","version":"9.9"}` {
				t.Errorf("agent = %s, want name %q", got, tt.want)
			}
		})
	}
}

// TestASR703_NoInitialize: without initialize the header has no agent,
// unless one is configured.
func TestASR703_NoInitialize(t *testing.T) {
	for config, want := range map[string]string{"": "null", `{"agentName":"com.example.a"}`: `{"name":"com.example.a"}`} {
		h := records(t, mapAll(t, startReq(config), parseFrames(t, wire(newReq, newResp))), "s1")[0]
		if got := js(h["agent"]); got != want {
			t.Errorf("config %q: agent = %s, want %s", config, got, want)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []string{`{"agentName":"not reverse dns"}`, `{"agentNmae":"com.x.y"}`, `[1]`, `{"registry":{"agents":"x"}}`} {
		if _, err := newMapper().Start(context.Background(), startReq(cfg)); !errors.Is(err, ErrConfig) {
			t.Errorf("config %s: err = %v, want ErrConfig", cfg, err)
		}
	}
}

// TestASR711_WorkspaceRoots: cwd is root0, additionalDirectories root1…;
// absolute paths become PathRefs segment-wise.
func TestASR711_WorkspaceRoots(t *testing.T) {
	frames := parseFrames(t, wire(initReq, initResp,
		`c2a {"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w/proj","additionalDirectories":["/w/lib","/opt/x",7]}}`,
		newResp,
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t1","name":"grep","locations":[{"path":"/w/proj"},{"path":"/w/library/a.go","line":3},{"path":"/w/lib/b.go"},{"path":"/opt/x/y/z"}],"status":"completed"}`),
	))
	outs := mapAll(t, startReq(""), frames)
	rs := records(t, outs, "s1")
	if got, want := js(rs[0]["workspace"]), `{"roots":[{"id":"root0","path":"/w/proj"},{"id":"root1","path":"/w/lib"},{"id":"root2","path":"/opt/x"}]}`; got != want {
		t.Errorf("workspace = %s\nwant %s", got, want)
	}
	call := ofType(rs, "tool_call")[0]
	want := `[{"path":{"path":"","root":"root0"}},{"line":3,"path":{"path":"/w/library/a.go","root":null}},{"path":{"path":"b.go","root":"root1"}},{"path":{"path":"y/z","root":"root2"}}]`
	if got := js(call["locations"]); got != want {
		t.Errorf("locations = %s\nwant %s", got, want)
	}
	if !strings.Contains(strings.Join(summaries(outs), "|"), "an additional directory is not a string") {
		t.Errorf("no diagnostic for the non-string directory: %v", summaries(outs))
	}
}

// TestASR712_NoMCPSecrets: MCP server env, headers and args never reach
// any output.
func TestASR712_NoMCPSecrets(t *testing.T) {
	outs := mapAll(t, startReq(""), loadFrames(t, "turn"))
	for _, o := range outs {
		blob := string(o.JSON) + o.Summary + o.Detail
		for _, secret := range []string{"SECRET", "gh-mcp", "Authorization", "GH_TOKEN"} {
			if strings.Contains(blob, secret) {
				t.Errorf("output carries %q: %s", secret, blob)
			}
		}
	}
}

// TestASR722_LossyDeclared: the always-applying categories are in the
// header; reasoning when a thought had a non-text block, and the tool
// categories as one declaration before the first tool records.
func TestASR722_LossyDeclared(t *testing.T) {
	rs := records(t, mapAll(t, startReq(""), parseFrames(t, opened(
		upd(`{"sessionUpdate":"agent_thought_chunk","messageId":"th","content":{"type":"image","data":"AA==","mimeType":"image/png"}}`),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed"}`),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t2","status":"completed"}`),
		idle,
	))), "s1")
	got := types(rs)
	want := []string{"header", "declaration", "message", "declaration", "tool_call", "tool_result", "tool_call", "tool_result", "state"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("types (-want +got):\n%s", diff)
	}
	// The thought message (no text left) is written before the tool call,
	// the order of first sight, with its loss declared just before it.
	decls := ofType(rs, "declaration")
	if js(decls[0]["lossy"]) != `["reasoning"]` || js(decls[1]["lossy"]) != `["_org.agent-session.acp/tool_status_transitions","tool_result.content"]` {
		t.Errorf("declarations = %s", js(decls))
	}
}
