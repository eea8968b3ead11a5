package clientlib

import "encoding/json"

// ACP v2 (2.0.0-alpha.9) shapes the client sends and reads; field names and
// optionality follow schema/v2/schema.unstable.json of @agentclientprotocol/sdk 2.0.0.

// ProtocolVersion is the ACP protocol version the client asks for.
const ProtocolVersion = 2

// Implementation is ACP's {name, title?, version}.
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// MCPServer is an ACP McpServer: type "stdio" uses Command, Args and Env;
// type "http" uses URL and Headers.
type MCPServer struct {
	Type    string      `json:"type"`
	Name    string      `json:"name"`
	Command string      `json:"command,omitempty"`
	Args    []string    `json:"args,omitempty"`
	Env     []NameValue `json:"env,omitempty"`
	URL     string      `json:"url,omitempty"`
	Headers []NameValue `json:"headers,omitempty"`
}

// NameValue is an ACP EnvVariable or HttpHeader.
type NameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type initializeRequest struct {
	ProtocolVersion int                `json:"protocolVersion"`
	Info            Implementation     `json:"info"`
	Capabilities    clientCapabilities `json:"capabilities"`
}

type clientCapabilities struct {
	Elicitation elicitationCapabilities `json:"elicitation"`
}

type elicitationCapabilities struct {
	Form struct{} `json:"form"`
}

type initializeResponse struct {
	ProtocolVersion int            `json:"protocolVersion"`
	Info            Implementation `json:"info"`
	AgentInfo       Implementation `json:"agentInfo"` // ACP v1
}

// v1InitializeRequest is ACP v1's initialize (protocolVersion 1): the
// client names itself in clientInfo and advertises no fs or terminal.
type v1InitializeRequest struct {
	ProtocolVersion    int            `json:"protocolVersion"`
	ClientInfo         Implementation `json:"clientInfo"`
	ClientCapabilities struct {
		FS struct {
			ReadTextFile  bool `json:"readTextFile"`
			WriteTextFile bool `json:"writeTextFile"`
		} `json:"fs"`
		Terminal bool `json:"terminal"`
	} `json:"clientCapabilities"`
}

// v1PromptResponse ends an ACP v1 turn.
type v1PromptResponse struct {
	StopReason string `json:"stopReason"`
}

type newSessionRequest struct {
	Cwd                   string      `json:"cwd"`
	AdditionalDirectories []string    `json:"additionalDirectories,omitempty"`
	MCPServers            []MCPServer `json:"mcpServers"`
}

type newSessionResponse struct {
	SessionID string `json:"sessionId"`
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type promptRequest struct {
	SessionID string      `json:"sessionId"`
	Prompt    []textBlock `json:"prompt"`
}

type promptResponse struct {
	MessageID string `json:"messageId"`
}

type sessionRequest struct {
	SessionID string `json:"sessionId"`
}

type sessionNotification struct {
	SessionID string          `json:"sessionId"`
	Update    json.RawMessage `json:"update"`
}

// updateHead reads the discriminator of any session/update; the other
// fields are only meaningful for state_update (subagent_update has an object
// "state"; a malformed stopReason is treated as absent).
type updateHead struct {
	SessionUpdate string          `json:"sessionUpdate"`
	State         json.RawMessage `json:"state"`
	StopReason    json.RawMessage `json:"stopReason"`
}

type permissionRequest struct {
	SessionID string `json:"sessionId"`
	Title     string `json:"title"`
	Options   []struct {
		OptionID string `json:"optionId"`
		Name     string `json:"name"`
		Kind     string `json:"kind"`
	} `json:"options"`
}

type permissionOutcome struct {
	Outcome  string `json:"outcome"`
	OptionID string `json:"optionId,omitempty"`
}

type permissionResponse struct {
	Outcome permissionOutcome `json:"outcome"`
}

type elicitationRequest struct {
	Mode            string `json:"mode"`
	Message         string `json:"message"`
	RequestedSchema *struct {
		Properties map[string]elicitationProperty `json:"properties"`
	} `json:"requestedSchema"`
}

type elicitationProperty struct {
	Type    string                   `json:"type"`
	Enum    []string                 `json:"enum"`
	OneOf   []struct{ Const string } `json:"oneOf"`
	Minimum *json.Number             `json:"minimum"`
	Items   *struct {
		Enum  []string                 `json:"enum"`
		AnyOf []struct{ Const string } `json:"anyOf"`
	} `json:"items"`
}

type elicitationResponse struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}
