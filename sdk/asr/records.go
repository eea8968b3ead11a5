package asr

import "encoding/json"

// Record types from the mapping seed and DESIGN.md ("ASR record fields").
const (
	TypeMessage      = "message"
	TypeToolCall     = "tool_call"
	TypeToolResult   = "tool_result"
	TypeFileChange   = "file_change"
	TypePermission   = "permission"
	TypeInputRequest = "input_request"
	TypePlan         = "plan"
	TypeTerminal     = "terminal"
	TypeState        = "state"
	TypeCompaction   = "compaction"
	TypeUsageSummary = "usage_summary"
	TypeSessionInfo  = "session_info"
	TypeConfigChange = "config_change"
	TypeSubagent     = "subagent"
	TypeDeclaration  = "declaration"
	// AuditPrefix + an ACP sessionUpdate kind is an audit-only record type (ASR-710).
	AuditPrefix = "org.agent-session.acp/"
	// AuditPromptError is the audit-only record kind (after AuditPrefix) of
	// a session/prompt answered with a JSON-RPC error: the error response
	// verbatim, ASR-710's form.
	AuditPromptError = "session_prompt_error"
)

// Message is a user, assistant or notice message. Content holds ACP content
// blocks plus {"type":"reasoning","text":…} and {"type":"refusal","text":…}.
type Message struct {
	Envelope
	MessageID  string            `json:"messageId"`
	IDSource   string            `json:"idSource,omitempty"`
	Role       string            `json:"role,omitempty"`
	Origin     string            `json:"origin,omitempty"`
	Author     string            `json:"author,omitempty"`
	Audience   string            `json:"audience,omitempty"`
	From       *SessionRef       `json:"from,omitempty"`
	Recipients []Recipient       `json:"recipients,omitempty"`
	Severity   string            `json:"severity,omitempty"`
	Content    []json.RawMessage `json:"content"`
	Provenance
}

// SessionRef names a session as a message party.
type SessionRef struct {
	Session string `json:"session"`
	// MessageID is the message's id in that session's transcript, when ACP
	// gives it (the 2.0.0-alpha.13 draft's senderMessageId): an acptap
	// vendor field.
	MessageID string `json:"_org.acptap/messageId,omitempty"`
}

// Recipient is one receiver of an inter-session message.
type Recipient struct {
	Actor SessionRef `json:"actor"`
}

// ToolCall is a tool invocation.
type ToolCall struct {
	Envelope
	CallID       string          `json:"callId"`
	CallIDSource string          `json:"callIdSource,omitempty"`
	Name         string          `json:"name,omitempty"`
	Title        string          `json:"title,omitempty"`
	Kind         string          `json:"kind,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	Locations    []Location      `json:"locations,omitempty"`
	Provenance
}

// Location is a place a tool call touches.
type Location struct {
	Path PathRef         `json:"path"`
	Line json.RawMessage `json:"line,omitempty"`
}

// ToolResult is the outcome of a tool call; Envelope.Status holds its status.
type ToolResult struct {
	Envelope
	CallID         string            `json:"callId"`
	Linkage        string            `json:"linkage,omitempty"`
	DisplayContent []json.RawMessage `json:"displayContent,omitempty"`
	Raw            json.RawMessage   `json:"raw,omitempty"`
	Exec           *Exec             `json:"exec,omitempty"`
	Provenance
}

// Exec links a tool result to the terminal it ran in.
type Exec struct {
	TerminalID string `json:"terminalId"`
}

// FileChange is a change to files caused by a tool call (ASR-715).
type FileChange struct {
	Envelope
	Cause     *Cause   `json:"cause,omitempty"`
	Changes   []Change `json:"changes"`
	Patch     *Patch   `json:"patch,omitempty"`
	Precision string   `json:"precision,omitempty"`
	Provenance
}

// Cause names the tool call behind a change.
type Cause struct {
	CallID string `json:"callId"`
}

// Change is one file operation. Meta is the source's metadata of the
// change, as sent (ACP's DiffChange._meta; acpv1 keeps a v1 diff's full
// texts there).
type Change struct {
	Op       string                     `json:"op"`
	Path     *PathRef                   `json:"path,omitempty"`
	OldPath  *PathRef                   `json:"oldPath,omitempty"`
	FileType string                     `json:"fileType,omitempty"`
	MimeType string                     `json:"mimeType,omitempty"`
	Meta     map[string]json.RawMessage `json:"_meta,omitempty"`
}

// Patch is the change as patch text.
type Patch struct {
	Format string `json:"format"`
	Text   string `json:"text"`
}

// Permission is a permission request and its decision (ASR-716).
type Permission struct {
	Envelope
	RequestID        string          `json:"requestId"`
	IDSource         string          `json:"idSource,omitempty"`
	Title            string          `json:"title,omitempty"`
	Description      string          `json:"description,omitempty"`
	Options          json.RawMessage `json:"options,omitempty"`
	Subject          json.RawMessage `json:"subject,omitempty"`
	Decision         string          `json:"decision,omitempty"`
	SelectedOptionID string          `json:"selectedOptionId,omitempty"`
	Provenance
}

// InputRequest is a question put to the user (ASR-734).
type InputRequest struct {
	Envelope
	RequestID       string          `json:"requestId"`
	IDSource        string          `json:"idSource,omitempty"`
	CallID          string          `json:"callId,omitempty"`
	Mode            string          `json:"mode,omitempty"`
	Message         string          `json:"message,omitempty"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	URL             string          `json:"url,omitempty"`
	Response        json.RawMessage `json:"response,omitempty"`
	Provenance
}

// Plan is a plan snapshot; the latest revision wins.
type Plan struct {
	Envelope
	PlanID   string          `json:"planId"`
	PlanType string          `json:"planType,omitempty"`
	Entries  json.RawMessage `json:"entries"`
	Provenance
}

// Terminal is an agent-owned terminal; Envelope.Status is running or exited.
type Terminal struct {
	Envelope
	TerminalID string          `json:"terminalId"`
	Command    string          `json:"command,omitempty"`
	Cwd        *PathRef        `json:"cwd,omitempty"`
	ExitCode   json.RawMessage `json:"exitCode,omitempty"`
	Signal     json.RawMessage `json:"signal,omitempty"`
	Output     *Output         `json:"output,omitempty"`
	// Size is the terminal size ACP last gave ({cols, rows}, the
	// 2.0.0-alpha.13 draft's terminal_update.size): an acptap vendor field.
	Size json.RawMessage `json:"_org.acptap/size,omitempty"`
	Provenance
}

// Output is captured terminal output.
type Output struct {
	Blob Blob `json:"blob"`
}

// Blob is bytes in a text encoding ("base64").
type Blob struct {
	Encoding string `json:"encoding"`
	Data     string `json:"data"`
}

// State is a session state change.
type State struct {
	Envelope
	State      string          `json:"state"`
	StopReason json.RawMessage `json:"stopReason,omitempty"`
	Error      json.RawMessage `json:"error,omitempty"`
	Provenance
}

// Compaction is a context compaction (ASR-719).
type Compaction struct {
	Envelope
	CompactionID string            `json:"compactionId"`
	Kind         string            `json:"kind"`
	Summary      []json.RawMessage `json:"summary,omitempty"`
	Error        json.RawMessage   `json:"error,omitempty"`
	Replaces     *Replaces         `json:"replaces,omitempty"`
	Provenance
}

// Replaces bounds what a compaction stands for.
type Replaces struct {
	ThroughID string `json:"throughId"`
}

// UsageSummary is a usage aggregate (ASR-720). IncludesChildren is written
// even when null.
type UsageSummary struct {
	Envelope
	Scope            string         `json:"scope"`
	Cumulative       bool           `json:"cumulative"`
	IncludesChildren *bool          `json:"includesChildren"`
	ContextWindow    *ContextWindow `json:"contextWindow,omitempty"`
	Cost             *Cost          `json:"cost,omitempty"`
	Provenance
}

// ContextWindow is how much of the model's context is in use.
type ContextWindow struct {
	Used json.RawMessage `json:"used"`
	Size json.RawMessage `json:"size"`
}

// Cost is a monetary amount.
type Cost struct {
	Amount   json.RawMessage `json:"amount"`
	Currency string          `json:"currency"`
}

// SessionInfo carries the session title; a null title clears it.
type SessionInfo struct {
	Envelope
	Title json.RawMessage `json:"title,omitempty"`
	Provenance
}

// ConfigChange is the session's full configuration after a change.
type ConfigChange struct {
	Envelope
	Options json.RawMessage `json:"options,omitempty"`
	Model   *ModelRef       `json:"model,omitempty"`
	Mode    string          `json:"mode,omitempty"`
	Provenance
}

// ModelRef names a model.
type ModelRef struct {
	ID string `json:"id"`
}

// Subagent links a child session to its parent (ASR-721).
type Subagent struct {
	Envelope
	ChildSession string `json:"childSession"`
	CallID       string `json:"callId,omitempty"`
	Provenance
}

// Declaration adds facts to the header after it was written.
type Declaration struct {
	Envelope
	Lossy          []string `json:"lossy,omitempty"`
	LocalThroughID string   `json:"localThroughId,omitempty"`
	Provenance
}

// Audit is an audit-only record (type AuditPrefix+kind); the source element
// is in Native.Record.
type Audit struct {
	Envelope
	Provenance
}
