package transcript

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/acptap/acptap/sdk/asr"
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
}

// Diff is one file's change.
type Diff struct {
	Op    string `json:"op,omitempty"`
	Path  string `json:"path,omitempty"`
	Patch string `json:"patch,omitempty"` // unified patch text when the record has one
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
	Paths    []string        `json:"paths,omitempty"`
}

// Terminal is a terminal's command and output.
type Terminal struct {
	ID      string `json:"id"`
	Command string `json:"command,omitempty"`
	Output  string `json:"output,omitempty"`
	Exit    string `json:"exit,omitempty"`
	Status  string `json:"status,omitempty"`
}

// Option is a permission option.
type Option struct {
	ID   string `json:"optionId"`
	Name string `json:"name"`
	Kind string `json:"kind,omitempty"`
}

// Permission is a permission request and its answer.
type Permission struct {
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	Options     []Option `json:"options,omitempty"`
	Status      string   `json:"status,omitempty"`
	Decision    string   `json:"decision,omitempty"`
	Selected    string   `json:"selected,omitempty"` // the chosen option's name
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
	// Records lists every record merged into the item, in stream order.
	Records []string `json:"records"`
	Refs    []Ref    `json:"refs,omitempty"`
	// Revised is set when a later record revised the item (ASR-706).
	Revised bool `json:"revised,omitempty"`

	Role      string  `json:"role,omitempty"`
	Origin    string  `json:"origin,omitempty"`
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
	Child      string            `json:"child,omitempty"` // a subagent's session, or an inter-session message's peer
	Lossy      []string          `json:"lossy,omitempty"`
	Summary    string            `json:"summary,omitempty"` // one line for kinds with little to show
	Audit      string            `json:"audit,omitempty"`   // the audit record's ACP kind
	JSON       []json.RawMessage `json:"json,omitempty"`    // the records, verbatim
}

// Input is a question to the user and its answer.
type Input struct {
	Mode     string          `json:"mode,omitempty"`
	Message  string          `json:"message,omitempty"`
	Status   string          `json:"status,omitempty"`
	Response json.RawMessage `json:"response,omitempty"`
	URL      string          `json:"url,omitempty"`
}

// State is a state change.
type State struct {
	State      string          `json:"state"`
	StopReason string          `json:"stopReason,omitempty"`
	Error      json.RawMessage `json:"error,omitempty"`
}

// Usage is a usage summary.
type Usage struct {
	Used     float64 `json:"used,omitempty"`
	Size     float64 `json:"size,omitempty"`
	Cost     float64 `json:"cost,omitempty"`
	Currency string  `json:"currency,omitempty"`
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
	rd := asr.NewReader(r)
	for {
		line, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if rd.Line() == 1 {
			if h, err := asr.ReadHeader(line); err == nil {
				b.header(line, h)
				continue
			}
			b.v.Problems = append(b.v.Problems, "line 1: not a header")
		}
		g, err := asr.ReadRecord(line)
		if err != nil {
			b.v.Problems = append(b.v.Problems, fmt.Sprintf("line %d: %s", rd.Line(), oneLine(err)))
			continue
		}
		if g.Seq < b.from {
			continue
		}
		if b.o.Limit > 0 && b.n >= b.o.Limit {
			b.v.Next = g.Seq
			break
		}
		if err := b.add(g, line); err != nil {
			b.v.Problems = append(b.v.Problems, fmt.Sprintf("line %d: %s record: %s", rd.Line(), g.Type, oneLine(err)))
		}
	}
	if b.v.Next == 0 {
		b.v.Tail = len(rd.Tail())
	}
	return b.v, nil
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }
