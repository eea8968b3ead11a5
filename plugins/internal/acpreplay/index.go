package acpreplay

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/acptap/acptap/internal/replay"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
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

	// The index of "far" records: a revision, result or file change more
	// than window lines after its entity's first record (the second pass
	// finds the near ones in its lookahead). revised maps an entity key
	// (entityKey) to its latest far revision; tools a call to its far
	// records.
	revised map[string]span
	tools   map[string]*toolSpans
	// recent maps the key of each entity whose first record is among the
	// last window lines to that line; ring evicts them.
	recent map[string]int
	ring   []string
	window int // the lookahead, in lines (Window when the replay started)
	// The session-level values sent after the history: the latest of each.
	title, usage, state span
	states              int
	usages, titles      int
}

// Window is how many lines after an entity's first record the second pass
// looks ahead for its revisions, result and file changes. Records further
// away are indexed by the first pass; so memory grows with the window and
// the far records, not with the stream. (A variable so that tests can try
// small windows.)
var Window = 4096

// near reports whether line is within window lines of the first record of
// the entity key.
func (r *replayer) near(key string, line int) bool {
	l, ok := r.recent[key]
	return ok && line-l < r.window
}

// first notes the first record of the entity key at line.
func (r *replayer) first(key string, line int) {
	r.recent[key] = line
	r.ring[line%r.window] = key
}

// span locates one line of the stream.
type span struct{ off, n int64 }

func (s span) ok() bool { return s.n > 0 }

// toolSpans are a call's latest far records.
type toolSpans struct {
	call, result span
	changes      []changeSpan // by chain, in order of first record
	emitted      bool
}

// changeSpan is a chain of file_change revisions. first is a record id in
// the chain (its root, or the near record a far revision supersedes).
type changeSpan struct {
	first, last string
	at          span
}

// envelope is what both passes read of every record (see scan). Raw
// members are presence flags, valid only while the line is.
type envelope struct {
	Type, ID, Supersedes, Status, TS, ObservedAt                  string
	Seq                                                           uint64
	MessageID, CallID, PlanID, CompactionID, TerminalID           string
	CauseCallID                                                   string
	Role, Origin, Author                                          string
	Audience, From, Recipients, Conversation, Capture, CopiedFrom []byte
	Scope                                                         string
	Cumulative                                                    bool
	ContextWindow                                                 []byte
	State                                                         string
	Lossy                                                         []string
	LocalThrough                                                  string
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
		return "k\x00" + e.CompactionID
	case asr.TypeTerminal:
		return "T\x00" + e.TerminalID
	case asr.TypeToolCall, asr.TypeToolResult:
		return callKey(e.CallID)
	case asr.TypeFileChange:
		if e.CauseCallID != "" {
			return callKey(e.CauseCallID)
		}
	}
	return ""
}

func callKey(id string) string { return "t\x00" + id }

// Record types of ASR core that replay never carries, by loss category
// (the seed's "Declared losses (replay)").
var lossByType = map[string]string{
	"inference":       asr.LossInference,
	"vcs":             asr.LossVCS,
	"commit":          asr.LossVCS,
	"workspace_state": asr.LossWorkspace,
	"checkpoint":      asr.LossCheckpoint,
	"gap":             asr.LossGap,
	"tombstone":       asr.LossTombstone,
	"instructions":    asr.LossInstructions,
	"instruction":     asr.LossInstructions,
	"turn_trigger":    asr.LossTurnTriggers,
	"trigger":         asr.LossTurnTriggers,
	"hook":            asr.LossHook,
	"memory_change":   asr.LossMemoryChange,
	"delivery":        asr.LossDelivery,
	"redaction":       asr.LossRedaction,
	"conversation":    asr.LossSenders,
	"branch":          asr.LossOffPath,

	asr.TypePermission:   asr.LossPermission,
	asr.TypeInputRequest: asr.LossInputRequest,
	asr.TypeConfigChange: asr.LossConfigHistory,
	asr.TypeSubagent:     asr.LossLineage,
}

// index is the first pass: it reads the header, tallies the loss
// categories, and locates the latest records of entities with more than one.
func (r *replayer) index() error {
	r.revised = map[string]span{}
	r.tools = map[string]*toolSpans{}
	r.recent = map[string]int{}
	r.ring = make([]string, r.window)
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
		if k := r.ring[lineNo%r.window]; k != "" {
			if r.recent[k] == lineNo-r.window {
				delete(r.recent, k)
			}
			r.ring[lineNo%r.window] = ""
		}
		if lineNo == 1 {
			h, err := asr.ReadHeader(line)
			if err != nil {
				return fmt.Errorf("replay: line 1: %w", err)
			}
			r.readHeader(h)
			return nil
		}
		var e envelope
		if !e.scan(line) || e.Type == "header" {
			r.diag("unreadable record line", fmt.Sprintf("line %d is not a record; it is not replayed", lineNo))
			r.tally.Omit("", asr.LossUnreplayable, "line "+strconv.Itoa(lineNo)+" is not a record")
			return nil
		}
		r.records++
		r.indexRecord(&e, at, lineNo)
		return nil
	})
	if err != nil {
		return err
	}
	if lineNo == 0 {
		return fmt.Errorf("replay: %w", asr.ErrNotHeader)
	}
	if tail > 0 {
		r.diag("uncommitted tail", fmt.Sprintf("%d bytes after the last LF are not part of the stream", tail))
		r.tally.Add(asr.LossUncommitted, 1, "")
	}
	return nil
}

func (r *replayer) readHeader(h asr.Header) {
	r.header = h
	if h.Workspace != nil {
		r.roots = h.Workspace.Roots
		for _, root := range h.Workspace.Roots {
			if root.Path == nil {
				r.tally.Add(asr.LossRedaction, 1, "a workspace root whose path is redacted")
			}
		}
	}
	for _, l := range h.Producer.Lossy {
		r.lossy[l] = true
	}
	if h.Lineage != nil {
		r.tally.Add(asr.LossLineage, 1, "the header's lineage")
	}
	if h.CreatedAt != "" {
		r.tally.Add(asr.LossTimestamps, 1, "")
	}
}

// indexRecord tallies one record and indexes it when it is far from its
// entity's first record.
func (r *replayer) indexRecord(e *envelope, at span, line int) {
	t := &r.tally
	if e.TS != "" || e.ObservedAt != "" {
		t.Add(asr.LossTimestamps, 1, "")
	}
	if present(e.Capture) || e.Status == "partial" {
		t.Add(asr.LossCapture, 1, "")
	}
	if present(e.CopiedFrom) {
		t.Add(asr.LossLineage, 1, "copy markers")
	}
	if e.Supersedes != "" {
		switch e.Type {
		case asr.TypeMessage, asr.TypeToolCall, asr.TypeToolResult, asr.TypeFileChange, asr.TypePlan, asr.TypeCompaction, asr.TypeTerminal:
			t.Add(asr.LossHistory, 1, "earlier revisions of entities")
		}
	}
	switch e.Type {
	case asr.TypeMessage, asr.TypePlan, asr.TypeCompaction, asr.TypeTerminal, asr.TypeToolCall:
		if e.Type == asr.TypeMessage {
			r.indexMessage(e)
		}
		key := e.entityKey()
		switch {
		case e.Supersedes == "":
			r.first(key, line)
		case r.near(key, line):
		case e.Type == asr.TypeToolCall:
			r.tool(e.CallID).call = at
		default:
			r.revised[key] = at
		}
	case asr.TypeToolResult:
		if !r.near(e.entityKey(), line) {
			r.tool(e.CallID).result = at
		}
	case asr.TypeFileChange:
		r.indexChange(e, at, line)
	case asr.TypeState:
		r.states++
		if e.State != "resumed" && e.State != "ended" {
			r.state = at
		}
	case asr.TypeUsageSummary:
		if e.Scope == "session" && e.Cumulative && present(e.ContextWindow) {
			r.usages++
			r.usage = at
		} else {
			t.Add(asr.LossInference, 1, "usage that is not the session's")
		}
	case asr.TypeSessionInfo:
		r.titles++
		r.title = at
	case asr.TypeDeclaration:
		t.Add(asr.LossDeclaration, 1, "")
		for _, l := range e.Lossy {
			r.lossy[l] = true
		}
		if e.LocalThrough != "" {
			t.Add(asr.LossLineage, 1, "copy markers")
		}
	default:
		switch cat, ok := lossByType[e.Type]; {
		case ok:
			t.Add(cat, 1, "")
		case strings.HasPrefix(e.Type, asr.AuditPrefix) || strings.Contains(e.Type, "/"):
			t.Add(asr.LossAudit, 1, strings.TrimPrefix(e.Type, asr.AuditPrefix))
		default:
			t.Add(asr.LossUnknownTypes, 1, e.Type)
		}
	}
}

func (r *replayer) indexMessage(e *envelope) {
	t := &r.tally
	if e.Origin == "notice" {
		if e.Supersedes == "" {
			t.Add(asr.LossNotices, 1, "")
		}
		return
	}
	if e.Origin == "prompt" {
		t.Add(asr.LossTurnTriggers, 1, "a message's origin \"prompt\"")
	}
	if e.Author != "" || present(e.Audience) || present(e.From) || present(e.Recipients) || present(e.Conversation) || e.Origin == "inter_session" {
		t.Add(asr.LossSenders, 1, "")
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

// indexChange indexes a file change far from its call: a revision that
// continues an indexed chain replaces its latest record; any other far
// change starts a chain (named by its own id, or by the near record it
// revises, which the second pass finds in its window).
func (r *replayer) indexChange(e *envelope, at span, line int) {
	if e.CauseCallID == "" {
		r.tally.Omit(e.ID, asr.LossUnreplayable, "a file change no tool call caused has no place in ACP")
		return
	}
	ts := r.tools[e.CauseCallID]
	if e.Supersedes != "" && ts != nil {
		for i := range ts.changes {
			if ts.changes[i].last == e.Supersedes {
				ts.changes[i].last, ts.changes[i].at = e.ID, at
				return
			}
		}
	}
	if r.near(e.entityKey(), line) {
		return
	}
	first := e.ID
	if e.Supersedes != "" {
		first = e.Supersedes
	}
	ts = r.tool(e.CauseCallID)
	ts.changes = append(ts.changes, changeSpan{first: first, last: e.ID, at: at})
}

// report finishes the loss report.
func (r *replayer) report() []byte {
	t := &r.tally
	if r.states > 0 {
		n := r.states
		if r.state.ok() {
			n--
		}
		t.Add(asr.LossStateHistory, n, "")
	}
	if r.usages > 1 {
		t.Add(asr.LossHistory, r.usages-1, "earlier usage values")
	}
	if r.titles > 1 {
		t.Add(asr.LossHistory, r.titles-1, "earlier titles")
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
			t.Omit(r.recordID(ts.result), asr.LossUnreplayable, "a tool result whose call "+strconv.Quote(id)+" is not in the stream")
		}
		for _, c := range ts.changes {
			t.Omit(c.last, asr.LossUnreplayable, "a file change caused by call "+strconv.Quote(id)+", which is not in the stream")
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

// recordID reads the id of the record at sp.
func (r *replayer) recordID(sp span) string {
	line, err := r.src.lineAt(sp.off, sp.n)
	if err != nil {
		return ""
	}
	var e envelope
	e.scan(line)
	return e.ID
}

// diag emits a diagnostic (a failing emit is noticed at the next update).
func (r *replayer) diag(summary, detail string) {
	_ = r.emit(sdk.Diag(sdk.SeverityWarning, r.header.SessionID, summary, detail))
}
