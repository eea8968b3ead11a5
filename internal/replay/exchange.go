package replay

import (
	"encoding/json"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// WireLine is one line of a synthetic ACP exchange.
type WireLine struct {
	Dir  sdk.Direction
	Line []byte
}

// ResumeExchange is the exchange in which a recorder observes a replay, as
// it would observe an agent replaying history (ASR-732): before the
// replayed updates, the client's initialize and the agent's answer (info
// named after the stream's agent), then session/resume for the stream's
// session with its roots (cwd and additionalDirectories; a redacted root
// gets a placeholder path that matches nothing, so that root IDs keep their
// positions) and replayFrom {type: "start"}; after them, the resume
// response.
func ResumeExchange(h asr.Header) (before, after []WireLine) {
	name, ver := "acptap-replay", "0"
	if h.Agent != nil && h.Agent.Name != "" {
		name = h.Agent.Name
		if h.Agent.Version != "" {
			ver = h.Agent.Version
		}
	}
	var roots []string
	if h.Workspace != nil {
		for _, r := range h.Workspace.Roots {
			p := "/.acptap-redacted-root/" + r.ID
			if r.Path != nil {
				p = *r.Path
			}
			roots = append(roots, p)
		}
	}
	if len(roots) == 0 {
		roots = []string{"/"}
	}
	params := map[string]any{"sessionId": h.SessionID, "cwd": roots[0], "replayFrom": map[string]any{"type": "start"}}
	if len(roots) > 1 {
		params["additionalDirectories"] = roots[1:]
	}
	line := func(v any) []byte {
		b, _ := asr.Marshal(v)
		return b
	}
	before = []WireLine{
		{sdk.C2A, line(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize",
			"params": map[string]any{"protocolVersion": 2, "info": map[string]any{"name": "acptap-roundtrip", "version": "1"}}})},
		{sdk.A2C, line(map[string]any{"jsonrpc": "2.0", "id": 0,
			"result": map[string]any{"protocolVersion": 2, "info": map[string]any{"name": name, "version": ver}}})},
		{sdk.C2A, line(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "session/resume", "params": params})},
	}
	after = []WireLine{{sdk.A2C, json.RawMessage(`{"jsonrpc":"2.0","id":1,"result":{}}`)}}
	return before, after
}

// LoadExchange is ResumeExchange for ACP v1 (protocolVersion 1): the
// client's initialize and the agent's answer (agentInfo named after the
// stream's agent, loadSession), then session/load for the stream's session
// with its roots and no MCP servers; after the replayed updates, the load
// response. A v1 agent replays history inside session/load, before its
// response, as the v1 replay is sent.
func LoadExchange(h asr.Header) (before, after []WireLine) {
	v2before, _ := ResumeExchange(h)
	var agent, load struct {
		Result struct {
			Info json.RawMessage `json:"info"`
		} `json:"result"`
		Params map[string]json.RawMessage `json:"params"`
	}
	_ = json.Unmarshal(v2before[1].Line, &agent)
	_ = json.Unmarshal(v2before[2].Line, &load)
	params := load.Params
	delete(params, "replayFrom")
	params["mcpServers"] = json.RawMessage("[]")
	line := func(v any) []byte {
		b, _ := asr.Marshal(v)
		return b
	}
	before = []WireLine{
		{sdk.C2A, line(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize",
			"params": map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}, "clientInfo": map[string]any{"name": "acptap-roundtrip", "version": "1"}}})},
		{sdk.A2C, line(map[string]any{"jsonrpc": "2.0", "id": 0,
			"result": map[string]any{"protocolVersion": 1, "agentInfo": agent.Result.Info, "agentCapabilities": map[string]any{"loadSession": true}, "authMethods": []any{}}})},
		{sdk.C2A, line(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "session/load", "params": params})},
	}
	after = []WireLine{{sdk.A2C, json.RawMessage(`{"jsonrpc":"2.0","id":1,"result":{}}`)}}
	return before, after
}
