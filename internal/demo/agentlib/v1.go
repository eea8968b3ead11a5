package agentlib

import "encoding/json"

// ACP v1 (protocolVersion 1, the stable v1 schema of @agentclientprotocol/sdk
// 2.4.0), which most clients in the world speak: the agent negotiates it when
// a client asks for version 1, and then speaks v1 shapes for the whole
// connection. The turns are the same scripts; this file translates what they
// send. v1 differences that matter here: no state_update (the turn's end is
// the session/prompt response, with its stopReason), a tool call is first
// announced as tool_call, a plan is "plan" with bare entries, a diff is
// path/oldText/newText, a permission request names the tool call, and
// initialize carries clientInfo/agentInfo and the v1 capability names.

// v1InitializeRequest is the v1 initialize params (clientInfo optional).
type v1InitializeRequest struct {
	ProtocolVersion int             `json:"protocolVersion"`
	ClientInfo      *implementation `json:"clientInfo"`
}

type v1InitializeResponse struct {
	ProtocolVersion   int                 `json:"protocolVersion"`
	AgentInfo         implementation      `json:"agentInfo"`
	AgentCapabilities v1AgentCapabilities `json:"agentCapabilities"`
	AuthMethods       []any               `json:"authMethods"`
}

type v1AgentCapabilities struct {
	LoadSession        bool `json:"loadSession"`
	PromptCapabilities struct {
		EmbeddedContext bool `json:"embeddedContext"`
	} `json:"promptCapabilities"`
	MCPCapabilities struct {
		HTTP bool `json:"http"`
	} `json:"mcpCapabilities"`
}

type v1PromptResponse struct {
	StopReason string `json:"stopReason"`
}

type v1ToolCall struct {
	SessionUpdate string             `json:"sessionUpdate,omitempty"` // "tool_call" or "tool_call_update"
	ToolCallID    string             `json:"toolCallId"`
	Title         string             `json:"title,omitempty"`
	Kind          string             `json:"kind,omitempty"`
	Status        string             `json:"status,omitempty"`
	Content       []any              `json:"content,omitempty"`
	Locations     []toolCallLocation `json:"locations,omitempty"`
	RawInput      any                `json:"rawInput,omitempty"`
	RawOutput     any                `json:"rawOutput,omitempty"`
}

type v1Diff struct {
	Type    string `json:"type"` // "diff"
	Path    string `json:"path"`
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
}

type v1Plan struct {
	SessionUpdate string      `json:"sessionUpdate"` // "plan"
	Entries       []planEntry `json:"entries"`
}

type v1PermissionRequest struct {
	SessionID string             `json:"sessionId"`
	ToolCall  v1ToolCall         `json:"toolCall"`
	Options   []permissionOption `json:"options"`
}

// negotiate answers the client's protocolVersion with the version both
// speak: 1 for a v1 client, else 2 (ACP: the agent's latest when it does
// not support the client's).
func negotiate(asked int) int {
	if asked == 1 {
		return 1
	}
	return ProtocolVersion
}

func (a *agent) initializeV1(params json.RawMessage) (any, *rpcError) {
	var p v1InitializeRequest
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(err.Error())
	}
	who := "a client without clientInfo"
	if p.ClientInfo != nil {
		who = p.ClientInfo.Name + " " + p.ClientInfo.Version
	}
	a.logf("initialize from %s (protocolVersion 1)", who)
	r := v1InitializeResponse{
		ProtocolVersion: 1,
		AgentInfo:       implementation{Name: Name, Title: "acptap example agent", Version: Version},
		AuthMethods:     []any{},
	}
	r.AgentCapabilities.PromptCapabilities.EmbeddedContext = true
	r.AgentCapabilities.MCPCapabilities.HTTP = true
	return r, nil
}

// v1Update is what a v1 connection sends for the turn's v2 update u, or
// false when v1 has no such update (state_update: v1 says it in the
// session/prompt response). announced tracks the tool calls already sent.
func v1Update(u any, announced map[string]bool) (any, bool) {
	switch x := u.(type) {
	case contentChunk:
		return x, true
	case stateUpdate, idleError:
		return nil, false
	case planUpdate:
		return v1Plan{SessionUpdate: "plan", Entries: x.Plan.Entries}, true
	case usageUpdate:
		return x, true
	case toolCallUpdate:
		tc := v1Tool(x)
		tc.SessionUpdate = "tool_call_update"
		if !announced[x.ToolCallID] {
			announced[x.ToolCallID] = true
			tc.SessionUpdate = "tool_call"
		}
		return tc, true
	}
	return u, true
}

func v1Tool(x toolCallUpdate) v1ToolCall {
	tc := v1ToolCall{ToolCallID: x.ToolCallID, Title: x.Title, Kind: x.Kind, Status: x.Status,
		Locations: x.Locations, RawInput: x.RawInput, RawOutput: x.RawOutput}
	for _, c := range x.Content {
		if d, ok := c.(diffItem); ok && len(d.Changes) > 0 {
			// The scripted edit replaces one line (oldLine → newLine).
			c = v1Diff{Type: "diff", Path: d.Changes[0].Path, OldText: oldLine, NewText: newLine}
		}
		tc.Content = append(tc.Content, c)
	}
	return tc
}

// v1Permission is the v1 shape of a permission request about a tool call.
func v1Permission(r requestPermissionRequest) v1PermissionRequest {
	p := v1PermissionRequest{SessionID: r.SessionID, Options: r.Options}
	if r.Subject != nil {
		p.ToolCall = v1Tool(r.Subject.ToolCall)
	}
	return p
}
