package acpv2

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
	"github.com/acptap/acptap/sdk/replay"
)

// replayer is one replay: the index built by the first pass, and the
// report being tallied.
type replayer struct {
	ctx    context.Context
	src    source
	emit   func(sdk.Output) error
	target string

	header  asr.Header
	roots   []asr.Root
	lossy   map[string]bool // the stream's own declared losses
	records int
	updates int
	tally   replay.Tally

	// revised maps an entity (kind + "\x00" + id) that has superseding
	// records to its latest record. Entities with one record need no entry.
	revised map[string]span
	// tools maps a call with more than one record (a revision, a result, a
	// file change) to where they are.
	tools map[string]*toolSpans
	// The session-level values sent after the history: the latest of each.
	title, usage, state span
	states           int
	usages, titles   int
}

// span locates one line of the stream.
type span struct{ off, n int64 }

func (s span) ok() bool { return s.n > 0 }

// toolSpans are a call's latest records.
type toolSpans struct {
	call, result span
	resultID     string
	changes      []changeSpan // by chain, in order of first record
	emitted      bool
}

type changeSpan struct {
	first, last string // record ids: the chain's first and latest
	at          span
}

// envelope is what both passes read of every record (see scan). Raw
// members are presence flags, valid only while the line is.
type envelope struct {
	Type, ID, Supersedes, Status, TS, ObservedAt                   string
	Seq                                                            uint64
	MessageID, CallID, PlanID, CompactionID, TerminalID            string
	CauseCallID                                                    string
	Role, Origin, Author                                           string
	Audience, From, Recipients, Conversation, Capture, CopiedFrom []byte
	Scope                                                          string
	Cumulative                                                     bool
	ContextWindow                                                  []byte
	State                                                          string
	Lossy                                                          []string
	LocalThrough                                                   string
}

// entityKey is the key of a record's entity in revised, or "" for records
// that are not replayed as entities.
func (e *envelope) entityKey() string {
	switch e.Type {
	case asr.TypeMessage:
		return "m\x00" + e.MessageID
	case asr.TypePlan:
		return "p\x00" + e.PlanID
	case asr.TypeCompaction:
		return "c\x00" + e.CompactionID
	case asr.TypeTerminal:
		return "t\x00" + e.TerminalID
	}
	return ""
}

// Record types of ASR core that replay never carries, by loss category
// (the seed's "Declared losses (replay)").
var lossByType = map[string]string{
	"inference":       replay.LossInference,
	"vcs":             replay.LossVCS,
	"commit":          replay.LossVCS,
	"workspace_state": replay.LossWorkspace,
	"checkpoint":      replay.LossCheckpoint,
	"gap":             replay.LossGap,
	"tombstone":       replay.LossTombstone,
	"instructions":    replay.LossInstructions,
	"instruction":     replay.LossInstructions,
	"turn_trigger":    replay.LossTurnTriggers,
	"trigger":         replay.LossTurnTriggers,
	"hook":            replay.LossHook,
	"memory_change":   replay.LossMemoryChange,
	"delivery":        replay.LossDelivery,
	"redaction":       replay.LossRedaction,
	"conversation":    replay.LossSenders,
	"branch":          replay.LossOffPath,

	asr.TypePermission:   replay.LossPermission,
	asr.TypeInputRequest: replay.LossInputRequest,
	asr.TypeConfigChange: replay.LossConfigHistory,
	asr.TypeSubagent:     replay.LossLineage,
}

// index is the first pass: it reads the header, tallies the loss
// categories, and locates the latest records of entities with more than one.
func (r *replayer) index() error {
	r.revised = map[string]span{}
	r.tools = map[string]*toolSpans{}
	r.lossy = map[string]bool{}
	lineNo := 0
	tail, err := r.src.lines(func(off int64, line []byte) error {
		lineNo++
		if lineNo%4096 == 0 {
			if err := r.ctx.Err(); err != nil {
				return err
			}
		}
		at := span{off, int64(len(line))}
		if lineNo == 1 {
			h, err := asr.ReadHeader(line)
			if err != nil {
				return fmt.Errorf("acpv2: replay: line 1: %w", err)
			}
			r.readHeader(h)
			return nil
		}
		var e envelope
		if !e.scan(line) || e.Type == "header" {
			r.diag("unreadable record line", fmt.Sprintf("line %d is not a record; it is not replayed", lineNo))
			r.tally.Omit("", replay.LossUnreplayable, "line "+strconv.Itoa(lineNo)+" is not a record")
			return nil
		}
		r.records++
		r.indexRecord(&e, at)
		return nil
	})
	if err != nil {
		return err
	}
	if lineNo == 0 {
		return fmt.Errorf("acpv2: replay: %w", asr.ErrNotHeader)
	}
	if tail > 0 {
		r.diag("uncommitted tail", fmt.Sprintf("%d bytes after the last LF are not part of the stream", tail))
		r.tally.Add(replay.LossUncommitted, 1, "")
	}
	return nil
}

func (r *replayer) readHeader(h asr.Header) {
	r.header = h
	if h.Workspace != nil {
		r.roots = h.Workspace.Roots
		for _, root := range h.Workspace.Roots {
			if root.Path == nil {
				r.tally.Add(replay.LossRedaction, 1, "a workspace root whose path is redacted")
			}
		}
	}
	for _, l := range h.Producer.Lossy {
		r.lossy[l] = true
	}
	if h.Lineage != nil {
		r.tally.Add(replay.LossLineage, 1, "the header's lineage")
	}
	if h.CreatedAt != "" {
		r.tally.Add(replay.LossTimestamps, 1, "")
	}
}

// indexRecord tallies one record and indexes it when its entity has more
// than one record.
func (r *replayer) indexRecord(e *envelope, at span) {
	t := &r.tally
	if e.TS != "" || e.ObservedAt != "" {
		t.Add(replay.LossTimestamps, 1, "")
	}
	if present(e.Capture) || e.Status == "partial" {
		t.Add(replay.LossCapture, 1, "")
	}
	if present(e.CopiedFrom) {
		t.Add(replay.LossLineage, 1, "copy markers")
	}
	if e.Supersedes != "" {
		switch e.Type {
		case asr.TypeMessage, asr.TypeToolCall, asr.TypeToolResult, asr.TypeFileChange, asr.TypePlan, asr.TypeCompaction, asr.TypeTerminal:
			t.Add(replay.LossHistory, 1, "earlier revisions of entities")
		}
	}
	switch e.Type {
	case asr.TypeMessage:
		r.indexMessage(e)
	case asr.TypeToolCall:
		if e.Supersedes != "" {
			r.tool(e.CallID).call = at
		}
		return
	case asr.TypeToolResult:
		ts := r.tool(e.CallID)
		ts.result, ts.resultID = at, e.ID
		return
	case asr.TypeFileChange:
		r.indexChange(e, at)
		return
	case asr.TypePlan, asr.TypeCompaction, asr.TypeTerminal:
	case asr.TypeState:
		r.states++
		if e.State != "resumed" && e.State != "ended" {
			r.state = at
		}
		return
	case asr.TypeUsageSummary:
		if e.Scope == "session" && e.Cumulative && present(e.ContextWindow) {
			r.usages++
			r.usage = at
		} else {
			t.Add(replay.LossInference, 1, "usage that is not the session's")
		}
		return
	case asr.TypeSessionInfo:
		r.titles++
		r.title = at
		return
	case asr.TypeDeclaration:
		t.Add(replay.LossDeclaration, 1, "")
		for _, l := range e.Lossy {
			r.lossy[l] = true
		}
		if e.LocalThrough != "" {
			t.Add(replay.LossLineage, 1, "copy markers")
		}
		return
	default:
		switch cat, ok := lossByType[e.Type]; {
		case ok:
			t.Add(cat, 1, "")
		case strings.HasPrefix(e.Type, asr.AuditPrefix) || strings.Contains(e.Type, "/"):
			t.Add(replay.LossAudit, 1, strings.TrimPrefix(e.Type, asr.AuditPrefix))
		default:
			t.Add(replay.LossUnknownTypes, 1, e.Type)
		}
		return
	}
	if e.Supersedes != "" {
		r.revised[e.entityKey()] = at
	}
}

func (r *replayer) indexMessage(e *envelope) {
	t := &r.tally
	if e.Origin == "notice" {
		if e.Supersedes == "" {
			t.Add(replay.LossNotices, 1, "")
		}
		return
	}
	if e.Origin == "prompt" {
		t.Add(replay.LossTurnTriggers, 1, "a message's origin \"prompt\"")
	}
	if e.Author != "" || present(e.Audience) || present(e.From) || present(e.Recipients) || present(e.Conversation) || e.Origin == "inter_session" {
		t.Add(replay.LossSenders, 1, "")
	}
}

func (r *replayer) tool(callID string) *toolSpans {
	ts, ok := r.tools[callID]
	if !ok {
		ts = &toolSpans{}
		r.tools[callID] = ts
	}
	return ts
}

// indexChange places a file change with its call: a superseding record
// replaces the change whose chain it continues.
func (r *replayer) indexChange(e *envelope, at span) {
	if e.CauseCallID == "" {
		r.tally.Omit(e.ID, replay.LossUnreplayable, "a file change no tool call caused has no place in ACP")
		return
	}
	ts := r.tool(e.CauseCallID)
	if e.Supersedes != "" {
		for i := range ts.changes {
			if ts.changes[i].last == e.Supersedes {
				ts.changes[i].last, ts.changes[i].at = e.ID, at
				return
			}
		}
	}
	ts.changes = append(ts.changes, changeSpan{first: e.ID, last: e.ID, at: at})
}

// report finishes the loss report.
func (r *replayer) report() []byte {
	t := &r.tally
	if r.states > 0 {
		n := r.states
		if r.state.ok() {
			n--
		}
		t.Add(replay.LossStateHistory, n, "")
	}
	if r.usages > 1 {
		t.Add(replay.LossHistory, r.usages-1, "earlier usage values")
	}
	if r.titles > 1 {
		t.Add(replay.LossHistory, r.titles-1, "earlier titles")
	}
	callIDs := make([]string, 0)
	for id, ts := range r.tools {
		if !ts.emitted && (ts.result.ok() || len(ts.changes) > 0) {
			callIDs = append(callIDs, id)
		}
	}
	slices.Sort(callIDs)
	for _, id := range callIDs {
		ts := r.tools[id]
		if ts.result.ok() {
			t.Omit(ts.resultID, replay.LossUnreplayable, "a tool result whose call "+strconv.Quote(id)+" is not in the stream")
		}
		for _, c := range ts.changes {
			t.Omit(c.last, replay.LossUnreplayable, "a file change caused by call "+strconv.Quote(id)+", which is not in the stream")
		}
	}
	rep := t.Report()
	rep.SessionID = r.header.SessionID
	rep.Target = r.target
	rep.Records = r.records
	rep.Updates = r.updates
	rep.SourceLossy = asr.SortedKeys(r.lossy)
	return rep.Marshal()
}

// diag emits a diagnostic (a failing emit is noticed at the next update).
func (r *replayer) diag(summary, detail string) {
	_ = r.emit(sdk.Diag(sdk.SeverityWarning, r.header.SessionID, summary, detail))
}
