package transcript

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
)

// Item kinds.
const (
	KindMessage     = "message"
	KindTool        = "tool"
	KindPermission  = "permission"
	KindInput       = "input_request"
	KindPlan        = "plan"
	KindFileChange  = "file_change" // one whose tool call is not in view
	KindTerminal    = "terminal"
	KindState       = "state"
	KindUsage       = "usage"
	KindCompaction  = "compaction"
	KindSubagent    = "subagent"
	KindSessionInfo = "session_info"
	KindConfig      = "config_change"
	KindDeclaration = "declaration"
	KindAudit       = "audit"
	KindOther       = "other"
)

// Ref is a record's source frames in a wire log (native.ref, ASR-723).
type Ref struct {
	Record string   `json:"record"`
	Wire   string   `json:"wire"`
	Frames []uint64 `json:"frames"`
}

// Block is a piece of message or tool content.
type Block struct {
	Type string `json:"type"`           // text, reasoning, refusal, image, resource_link, resource, diff, terminal, other
	Text string `json:"text,omitempty"` // text, or a link's URI, or a description
	Mime string `json:"mime,omitempty"`
	URI  string `json:"uri,omitempty"`  // an image's, a link's or a resource's
	Name string `json:"name,omitempty"` // a link's
}

// Diff is one file's change.
type Diff struct {
	Op      string `json:"op,omitempty"`
	Path    string `json:"path,omitempty"`    // DisplayPath of the file
	OldPath string `json:"oldPath,omitempty"` // a move's source
	Patch   string `json:"patch,omitempty"`   // unified patch text when the record has one
}

// Tool is a tool call with everything that followed it.
type Tool struct {
	CallID   string          `json:"callId"`
	Name     string          `json:"name,omitempty"`
	Title    string          `json:"title,omitempty"`
	Kind     string          `json:"kind,omitempty"`
	Input    json.RawMessage `json:"input,omitempty"`
	Status   string          `json:"status,omitempty"`
	Statuses []string        `json:"statuses,omitempty"` // every status it passed through, in order
	Result   []Block         `json:"result,omitempty"`
	Raw      json.RawMessage `json:"raw,omitempty"`
	Diffs    []Diff          `json:"diffs,omitempty"`
	Terminal *Terminal       `json:"terminal,omitempty"`
	Exec     string          `json:"exec,omitempty"`  // the terminal the result says ran it
	Paths    []string        `json:"paths,omitempty"` // its locations (DisplayPath[:line])
}

// Terminal is a terminal's command and output.
type Terminal struct {
	ID      string `json:"id"`
	Command string `json:"command,omitempty"`
	Output  string `json:"output,omitempty"`
	Exit    string `json:"exit,omitempty"`
	Signal  string `json:"signal,omitempty"`
	Cwd     string `json:"cwd,omitempty"`
	Status  string `json:"status,omitempty"`
	// Binary is the size of output that is not UTF-8 (then not in Output);
	// NotBase64 says the output could not be decoded.
	Binary    int  `json:"binary,omitempty"`
	NotBase64 bool `json:"notBase64,omitempty"`
	HasOutput bool `json:"-"` // the record carries output (maybe empty)
}

// Option is a permission option.
type Option struct {
	ID   string `json:"optionId"`
	Name string `json:"name"`
	Kind string `json:"kind,omitempty"`
}

// Permission is a permission request and its answer.
type Permission struct {
	RequestID   string   `json:"requestId,omitempty"`
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	Options     []Option `json:"options,omitempty"`
	Status      string   `json:"status,omitempty"`
	Decision    string   `json:"decision,omitempty"`
	Selected    string   `json:"selected,omitempty"` // the chosen option's name
	SelectedID  string   `json:"selectedId,omitempty"`
	// CallID or Command is what the permission is for.
	CallID  string `json:"callId,omitempty"`
	Command string `json:"command,omitempty"`
}

// PlanEntry is one step of a plan.
type PlanEntry struct {
	Content  string `json:"content"`
	Status   string `json:"status,omitempty"`
	Priority string `json:"priority,omitempty"`
}

// Item is one thing a reader sees.
type Item struct {
	Kind string `json:"kind"`
	Seq  uint64 `json:"seq"` // the first record's seq
	ID   string `json:"id"`  // the first record's id
	TS   string `json:"ts,omitempty"`
	// Entity is the id of what the item is about: a message's, tool
	// call's, request's, plan's, terminal's, compaction's or child
	// session's own id.
	Entity string `json:"entity,omitempty"`
	// Status is the latest record's status.
	Status string `json:"status,omitempty"`
	// Records lists every record merged into the item, in stream order.
	Records []string `json:"records"`
	Refs    []Ref    `json:"refs,omitempty"`
	// Revised is set when a later record revised the item (ASR-706).
	Revised bool `json:"revised,omitempty"`

	Role      string  `json:"role,omitempty"`
	Origin    string  `json:"origin,omitempty"`
	Author    string  `json:"author,omitempty"`
	Severity  string  `json:"severity,omitempty"`  // a notice's
	From      string  `json:"from,omitempty"`      // an inter-session message's sender session
	Reasoning bool    `json:"reasoning,omitempty"` // a message of reasoning only
	Blocks    []Block `json:"blocks,omitempty"`

	Tool       *Tool             `json:"tool,omitempty"`
	Permission *Permission       `json:"permission,omitempty"`
	Input      *Input            `json:"input,omitempty"`
	Plan       []PlanEntry       `json:"plan,omitempty"`
	Diffs      []Diff            `json:"diffs,omitempty"`
	Terminal   *Terminal         `json:"terminal,omitempty"`
	State      *State            `json:"state,omitempty"`
	Usage      *Usage            `json:"usage,omitempty"`
	Child      string            `json:"child,omitempty"`   // a subagent's session, or an inter-session message's peer
	Cause      string            `json:"cause,omitempty"`   // the tool call a file change or subagent came from
	Through    string            `json:"through,omitempty"` // the last record a compaction replaces, or a declaration's local copy went to
	Error      json.RawMessage   `json:"error,omitempty"`   // a compaction's
	Config     *Config           `json:"config,omitempty"`
	Failure    *Failure          `json:"failure,omitempty"` // a prompt the agent answered with an error
	Lossy      []string          `json:"lossy,omitempty"`
	Summary    string            `json:"summary,omitempty"` // one line for kinds with little to show
	Audit      string            `json:"audit,omitempty"`   // the audit record's ACP kind
	JSON       []json.RawMessage `json:"json,omitempty"`    // the records, verbatim
}

// Input is a question to the user and its answer.
type Input struct {
	RequestID string          `json:"requestId,omitempty"`
	Mode      string          `json:"mode,omitempty"`
	Message   string          `json:"message,omitempty"`
	Status    string          `json:"status,omitempty"`
	Response  json.RawMessage `json:"response,omitempty"`
	URL       string          `json:"url,omitempty"`
}

// State is a state change.
type State struct {
	State      string          `json:"state"`
	StopReason string          `json:"stopReason,omitempty"`
	Error      json.RawMessage `json:"error,omitempty"`
	Background string          `json:"background,omitempty"` // the background work it names ("none" for none)
}

// Usage is a usage summary.
type Usage struct {
	Scope    string  `json:"scope,omitempty"`
	Window   bool    `json:"window,omitempty"` // has a context window (Used, Size)
	Priced   bool    `json:"priced,omitempty"` // has a cost
	Used     float64 `json:"used,omitempty"`
	Size     float64 `json:"size,omitempty"`
	Cost     float64 `json:"cost,omitempty"`
	Currency string  `json:"currency,omitempty"`
}

// Config is a configuration change.
type Config struct {
	Model   string `json:"model,omitempty"`
	Mode    string `json:"mode,omitempty"`
	Options int    `json:"options"` // how many options the change lists
}

// Failure is a JSON-RPC error.
type Failure struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// View is a window of a stream.
type View struct {
	Header    json.RawMessage `json:"header,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Items     []Item          `json:"items"`
	// Counts are records by type in the window.
	Counts map[string]int `json:"counts"`
	// Losses are the loss categories declared in the window (header
	// included on the first window), with the declaring record.
	Losses []Loss `json:"losses,omitempty"`
	// From is the seq of the window's first record; Next the seq to ask
	// for next (0 at the end of the stream).
	From uint64 `json:"from"`
	Next uint64 `json:"next"`
	// Problems are lines that are not records, "line N: …".
	Problems []string `json:"problems,omitempty"`
	// Tail is the size of an uncommitted last line, if any.
	Tail int `json:"tail,omitempty"`
}

// Loss is a declared loss category.
type Loss struct {
	Category string `json:"category"`
	Record   string `json:"record"` // "header" or the declaration's id
}

// Options choose a window.
type Options struct {
	// From is the first record seq (0 or 1: the start).
	From uint64
	// Limit is the most records in the window (0: no limit).
	Limit int
	// WithJSON keeps each record's JSON in its item.
	WithJSON bool
}

// Build reads the stream from r and returns the window o selects.
func Build(r io.Reader, o Options) (*View, error) {
	b := newBuilder(o)
	rd := NewReader(r, b.from, 0)
	for {
		e, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		full := b.o.Limit > 0 && b.n >= b.o.Limit
		switch {
		case e.Header != nil:
			b.header(e.JSON, *e.Header)
		case full && e.Record != nil:
			b.v.Next = e.Record.Item.Seq
			return b.v, nil
		case full && e.Problem.Type != "":
			b.v.Next = e.Problem.Seq // a record whose body is bad: the next window's
			return b.v, nil
		case e.Problem != nil:
			b.v.Problems = append(b.v.Problems, e.Problem.String())
		default:
			b.add(e.Record, e.JSON)
		}
	}
	b.v.Tail = rd.Tail()
	return b.v, nil
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }
