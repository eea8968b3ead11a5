package agentlib

import "encoding/json"

// The ACP v2 (2.0.0-alpha.9) shapes this agent reads and writes. Field names
// and optionality follow schema/v2/schema.unstable.json of
// @agentclientprotocol/sdk 2.0.0; see DIGEST.md §1.

// ProtocolVersion is the ACP protocol version the agent speaks.
const ProtocolVersion = 2

type implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

type initializeRequest struct {
	ProtocolVersion int             `json:"protocolVersion"`
	Info            *implementation `json:"info"`
}

type initializeResponse struct {
	ProtocolVersion int               `json:"protocolVersion"`
	Info            implementation    `json:"info"`
	Capabilities    agentCapabilities `json:"capabilities"`
	AuthMethods     []any             `json:"authMethods"`
}

type agentCapabilities struct {
	Session sessionCapabilities `json:"session"`
}

type empty struct{}

type sessionCapabilities struct {
	Prompt                promptCapabilities `json:"prompt"`
	MCP                   mcpCapabilities    `json:"mcp"`
	AdditionalDirectories *empty             `json:"additionalDirectories,omitempty"`
}

type promptCapabilities struct {
	EmbeddedContext *empty `json:"embeddedContext,omitempty"`
}

type mcpCapabilities struct {
	Stdio *empty `json:"stdio,omitempty"`
	HTTP  *empty `json:"http,omitempty"`
}

type newSessionRequest struct {
	Cwd                   string            `json:"cwd"`
	AdditionalDirectories []string          `json:"additionalDirectories"`
	MCPServers            []json.RawMessage `json:"mcpServers"`
}

type newSessionResponse struct {
	SessionID string `json:"sessionId"`
}

type sessionRequest struct {
	SessionID string `json:"sessionId"`
}

type promptRequest struct {
	SessionID string            `json:"sessionId"`
	Prompt    []json.RawMessage `json:"prompt"`
}

type promptResponse struct {
	MessageID string `json:"messageId"`
}

type sessionNotification struct {
	SessionID string `json:"sessionId"`
	Update    any    `json:"update"`
}

type textBlock struct {
	Type string `json:"type"` // "text"
	Text string `json:"text"`
}

func text(s string) textBlock { return textBlock{Type: "text", Text: s} }

// contentChunk is user_message_chunk, agent_message_chunk or agent_thought_chunk.
type contentChunk struct {
	SessionUpdate string `json:"sessionUpdate"`
	MessageID     string `json:"messageId"`
	Content       any    `json:"content"`
}

type stateUpdate struct {
	SessionUpdate string `json:"sessionUpdate"` // "state_update"
	State         string `json:"state"`
	StopReason    string `json:"stopReason,omitempty"`
}

type toolCallUpdate struct {
	SessionUpdate string             `json:"sessionUpdate,omitempty"` // "tool_call_update"; empty inside a permission subject
	ToolCallID    string             `json:"toolCallId"`
	Name          string             `json:"name,omitempty"`
	Title         string             `json:"title,omitempty"`
	Kind          string             `json:"kind,omitempty"`
	Status        string             `json:"status,omitempty"`
	Content       []any              `json:"content,omitempty"`
	Locations     []toolCallLocation `json:"locations,omitempty"`
	RawInput      any                `json:"rawInput,omitempty"`
	RawOutput     any                `json:"rawOutput,omitempty"`
}

type toolCallLocation struct {
	Path string `json:"path"`
	Line uint32 `json:"line,omitempty"`
}

// contentItem is ToolCallContent {type:"content"}: the block sits under .content.
type contentItem struct {
	Type    string `json:"type"` // "content"
	Content any    `json:"content"`
}

func textContent(s string) contentItem { return contentItem{Type: "content", Content: text(s)} }

type diffItem struct {
	Type    string       `json:"type"` // "diff"
	Changes []diffChange `json:"changes"`
	Patch   *diffPatch   `json:"patch,omitempty"`
}

type diffChange struct {
	Operation string `json:"operation"`
	Path      string `json:"path"`
	FileType  string `json:"fileType,omitempty"`
	MimeType  string `json:"mimeType,omitempty"`
}

type diffPatch struct {
	Format string `json:"format"` // "git_patch"
	Text   string `json:"text"`
}

type planUpdate struct {
	SessionUpdate string    `json:"sessionUpdate"` // "plan_update"
	Plan          planItems `json:"plan"`
}

type planItems struct {
	Type    string      `json:"type"` // "items"
	PlanID  string      `json:"planId"`
	Entries []planEntry `json:"entries"`
}

type planEntry struct {
	Content  string `json:"content"`
	Priority string `json:"priority"`
	Status   string `json:"status"`
}

type usageUpdate struct {
	SessionUpdate string `json:"sessionUpdate"` // "usage_update"
	Used          uint64 `json:"used"`
	Size          uint64 `json:"size"`
	Cost          *cost  `json:"cost,omitempty"`
}

type cost struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

type requestPermissionRequest struct {
	SessionID   string             `json:"sessionId"`
	Title       string             `json:"title"`
	Description string             `json:"description,omitempty"`
	Subject     *permissionSubject `json:"subject,omitempty"`
	Options     []permissionOption `json:"options"`
}

type permissionSubject struct {
	Type     string         `json:"type"` // "tool_call"
	ToolCall toolCallUpdate `json:"toolCall"`
}

type permissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
}

type requestPermissionResponse struct {
	Outcome struct {
		Outcome  string `json:"outcome"`
		OptionID string `json:"optionId"`
	} `json:"outcome"`
}
