package acpreplay

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/acptap/acptap/internal/replay"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// play is the second pass: each entity, at its first record, as one
// whole-entity upsert of its latest revision (ASR-724, ASR-725); then the
// title, the usage and the current state. It looks window lines ahead for
// the entity's near records (revisions, a call's result and file changes);
// the first pass indexed the far ones.
func (r *replayer) play() error {
	la := &lookahead{last: map[string]int{}, changes: map[string][]int{}, window: r.window}
	lineNo := 0
	_, err := r.src.lines(func(off int64, line []byte) error {
		lineNo++
		if lineNo == 1 {
			return nil
		}
		if lineNo%4096 == 0 {
			if err := r.ctx.Err(); err != nil {
				return err
			}
		}
		a := ahead{at: span{off, int64(len(line))}}
		if a.e.scan(line) {
			a.key = a.e.entityKey()
		}
		a.e.dropRaw()
		la.push(a)
		if len(la.q) < r.window {
			return nil
		}
		err := r.playFront(la)
		la.pop()
		return err
	})
	if err != nil {
		return err
	}
	for ; len(la.q) > 0; la.pop() {
		if err := r.playFront(la); err != nil {
			return err
		}
	}
	for _, s := range []struct {
		at span
		fn func([]byte, []uint64) error
	}{{r.title, r.sessionInfo}, {r.usage, r.usageUpdate}, {r.state, r.stateUpdate}} {
		if !s.at.ok() {
			continue
		}
		line, err := r.src.lineAt(s.at.off, s.at.n)
		if err != nil {
			return err
		}
		var e envelope
		e.scan(line)
		if err := s.fn(line, []uint64{e.Seq}); err != nil {
			return err
		}
	}
	return nil
}

// ahead is a line in the second pass's lookahead.
type ahead struct {
	at  span
	e   envelope
	key string
}

// lookahead holds the lines not yet played, oldest first, with an index:
// the position of the last record of each (entity, type), and the
// positions of each call's file changes. Positions count lines from the
// first pushed; q[0] is at base.
type lookahead struct {
	q       []ahead
	base    int
	last    map[string]int
	changes map[string][]int
	window  int
}

func (l *lookahead) push(a ahead) {
	pos := l.base + len(l.q)
	l.q = append(l.q, a)
	if a.key == "" {
		return
	}
	l.last[a.key+"\x00"+a.e.Type] = pos
	if a.e.Type == asr.TypeFileChange {
		l.changes[a.key] = append(l.changes[a.key], pos)
	}
}

func (l *lookahead) pop() {
	a := &l.q[0]
	if a.key != "" {
		k := a.key + "\x00" + a.e.Type
		if l.last[k] == l.base {
			delete(l.last, k)
		}
		if a.e.Type == asr.TypeFileChange {
			cs := l.changes[a.key]
			for len(cs) > 0 && cs[0] <= l.base {
				cs = cs[1:]
			}
			if len(cs) == 0 {
				delete(l.changes, a.key)
			} else {
				l.changes[a.key] = cs
			}
		}
	}
	l.q[0] = ahead{}
	l.q = l.q[1:]
	l.base++
	if len(l.q) == 0 || cap(l.q) > 4*l.window {
		l.q = append(make([]ahead, 0, l.window+1), l.q...)
	}
}

// front is the line being played.
func (l *lookahead) front() *ahead { return &l.q[0] }

// latest is the span of the front entity's latest record of type typ: the
// far one the index has, else the last in the lookahead, else first.
func (l *lookahead) latest(typ string, far, first span) span {
	if far.ok() {
		return far
	}
	if pos, ok := l.last[l.front().key+"\x00"+typ]; ok && pos > l.base {
		return l.q[pos-l.base].at
	}
	return first
}

// dropRaw forgets the raw members, which point into a reused buffer.
func (e *envelope) dropRaw() {
	e.Audience, e.From, e.Recipients, e.Conversation, e.Capture, e.CopiedFrom, e.ContextWindow = nil, nil, nil, nil, nil, nil, nil
}

// playFront plays the front line if it is the first record of an entity.
func (r *replayer) playFront(la *lookahead) error {
	a := la.front()
	if a.key == "" || a.e.Supersedes != "" {
		return nil // not an entity, or a revision (sent at the first record)
	}
	switch a.e.Type {
	case asr.TypeMessage:
		if a.e.Origin == "notice" {
			return nil // ASR-730
		}
		return r.withLatest(la, r.message)
	case asr.TypePlan:
		return r.withLatest(la, r.plan)
	case asr.TypeCompaction:
		return r.withLatest(la, r.compaction)
	case asr.TypeTerminal:
		return r.withLatest(la, r.terminal)
	case asr.TypeToolCall:
		return r.toolCall(la)
	}
	return nil
}

// withLatest calls fn with the entity's latest record and the seqs of its
// first and latest records.
func (r *replayer) withLatest(la *lookahead, fn func([]byte, []uint64) error) error {
	a := la.front()
	at := la.latest(a.e.Type, r.revised[a.key], a.at)
	line, err := r.src.lineAt(at.off, at.n)
	if err != nil {
		return err
	}
	seqs := []uint64{a.e.Seq}
	if at != a.at {
		var e envelope
		e.scan(line)
		seqs = append(seqs, e.Seq)
	}
	return fn(line, seqs)
}

// undecodable reports a record that cannot be sent: it does not decode
// as its type.
func (r *replayer) undecodable(seqs []uint64, err error) error {
	id := asr.RecordID(seqs[len(seqs)-1])
	r.diag("record not replayed", id+": "+err.Error())
	r.tally.Omit(id, asr.LossUnreplayable, "a record that does not decode as its type")
	return nil
}

// send emits one session/update notification.
func (r *replayer) send(update any, seqs []uint64) error {
	u, err := asr.Marshal(update)
	if err != nil {
		return err
	}
	line, err := asr.Marshal(notification{JSONRPC: "2.0", Method: "session/update", Params: updateParams{SessionID: r.header.SessionID, Update: u}})
	if err != nil {
		return err
	}
	r.updates++
	return r.emit(sdk.Output{Kind: sdk.ACPFrame, Session: r.header.SessionID, JSON: line, FrameSeqs: seqs})
}

type notification struct {
	JSONRPC string       `json:"jsonrpc"`
	Method  string       `json:"method"`
	Params  updateParams `json:"params"`
}

type updateParams struct {
	SessionID string          `json:"sessionId"`
	Update    json.RawMessage `json:"update"`
}

type metaMap = map[string]json.RawMessage

// messageUpdate is user_message, agent_message and agent_thought.
type messageUpdate struct {
	SessionUpdate string            `json:"sessionUpdate"`
	MessageID     string            `json:"messageId"`
	Content       []json.RawMessage `json:"content"`
	Meta          metaMap           `json:"_meta,omitempty"`
}

// message replays a message (ASR-727): a user message as user_message; an
// assistant message's reasoning parts as agent_thoughts with derived IDs,
// before an agent_message with the other parts (refusals as text); a
// reasoning-only message as one agent_thought. Reasoning is sent as its
// text (or summary), never opaque.
func (r *replayer) message(line []byte, seqs []uint64) error {
	var m asr.Message
	if err := json.Unmarshal(line, &m); err != nil {
		return r.undecodable(seqs, err)
	}
	id := m.ID
	var content []json.RawMessage
	var thoughts []json.RawMessage // nil entries: reasoning without text
	for _, p := range m.Content {
		typ, o := replay.PartType(p)
		if o == nil {
			r.tally.Omit(id, asr.LossUnreplayable, "a content part that is not an object")
			continue
		}
		switch typ {
		case "reasoning":
			text, ok := replay.ReasoningText(o)
			if m.Role != "assistant" {
				r.tally.Omit(id, asr.LossReasoning, "a reasoning part in a "+strconv.Quote(m.Role)+" message")
				continue
			}
			if !ok {
				r.tally.Omit(id, asr.LossReasoning, "reasoning without text or summary (opaque reasoning is never sent)")
				thoughts = append(thoughts, nil)
				continue
			}
			if _, has := o["signature"]; has {
				r.tally.Add(asr.LossReasoning, 1, "reasoning signatures are never sent")
			}
			if _, has := o["opaque"]; has {
				r.tally.Add(asr.LossReasoning, 1, "opaque reasoning is never sent")
			}
			thoughts = append(thoughts, replay.TextBlock(text))
		case "refusal":
			var rf struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(p, &rf)
			content = append(content, replay.TextBlock(rf.Text))
		default:
			content = append(content, p)
		}
	}
	meta := m.Meta
	switch m.Role {
	case "user":
		return r.send(messageUpdate{SessionUpdate: "user_message", MessageID: m.MessageID, Content: nonNil(content), Meta: meta}, seqs)
	case "assistant":
	default:
		r.tally.Omit(id, asr.LossUnreplayable, "a message with role "+strconv.Quote(m.Role)+" has no ACP update")
		return nil
	}
	if len(thoughts) > 0 && len(content) == 0 {
		var blocks []json.RawMessage
		for _, t := range thoughts {
			if t != nil {
				blocks = append(blocks, t)
			}
		}
		if len(blocks) == 0 {
			return nil
		}
		return r.send(messageUpdate{SessionUpdate: "agent_thought", MessageID: m.MessageID, Content: blocks, Meta: meta}, seqs)
	}
	for n, t := range thoughts {
		if t == nil {
			continue
		}
		if err := r.send(messageUpdate{SessionUpdate: "agent_thought", MessageID: replay.ThoughtID(m.MessageID, n), Content: []json.RawMessage{t}}, seqs); err != nil {
			return err
		}
	}
	return r.send(messageUpdate{SessionUpdate: "agent_message", MessageID: m.MessageID, Content: nonNil(content), Meta: meta}, seqs)
}

func nonNil(b []json.RawMessage) []json.RawMessage {
	if b == nil {
		return []json.RawMessage{}
	}
	return b
}

// toolUpdate is one tool_call_update carrying the whole call.
type toolUpdate struct {
	SessionUpdate string            `json:"sessionUpdate"`
	ToolCallID    string            `json:"toolCallId"`
	Name          string            `json:"name,omitempty"`
	Title         string            `json:"title,omitempty"`
	Kind          string            `json:"kind,omitempty"`
	Status        string            `json:"status,omitempty"`
	Content       []json.RawMessage `json:"content,omitempty"`
	Locations     []acpLocation     `json:"locations,omitempty"`
	RawInput      json.RawMessage   `json:"rawInput,omitempty"`
	RawOutput     json.RawMessage   `json:"rawOutput,omitempty"`
	Meta          metaMap           `json:"_meta,omitempty"`
}

type acpLocation struct {
	Path string          `json:"path"`
	Line json.RawMessage `json:"line,omitempty"`
}

type contentItem struct {
	Type    string          `json:"type"`
	Content json.RawMessage `json:"content"`
}

type terminalItem struct {
	Type       string `json:"type"`
	TerminalID string `json:"terminalId"`
}

type diffItem struct {
	Type    string      `json:"type"`
	Changes []acpChange `json:"changes"`
	Patch   *asr.Patch  `json:"patch,omitempty"`
}

type acpChange struct {
	Operation string  `json:"operation"`
	OldPath   string  `json:"oldPath,omitempty"`
	Path      string  `json:"path,omitempty"`
	FileType  string  `json:"fileType,omitempty"`
	MimeType  string  `json:"mimeType,omitempty"`
	Meta      metaMap `json:"_meta,omitempty"`
}

// toolResult is what a tool result replays from: asr.ToolResult and the
// model-facing content another producer may have kept.
type toolResult struct {
	asr.ToolResult
	Content []json.RawMessage `json:"content"`
}

// toolCall replays a call with its result and the file changes it caused
// as one tool_call_update: status per ASR-728, display content (or content
// when there is none), diffs with absolute paths (ASR-729), and a terminal
// item for the terminal it ran in. Nothing is re-executed (ASR-726).
func (r *replayer) toolCall(la *lookahead) error {
	a := la.front()
	var far toolSpans
	if ts := r.tools[a.e.CallID]; ts != nil {
		ts.emitted = true
		far = *ts
	}
	seqs := []uint64{a.e.Seq}
	callAt := la.latest(asr.TypeToolCall, far.call, a.at)
	line, err := r.src.lineAt(callAt.off, callAt.n)
	if err != nil {
		return err
	}
	var c asr.ToolCall
	if err := json.Unmarshal(line, &c); err != nil {
		return r.undecodable(seqs, err)
	}
	if c.Seq != a.e.Seq {
		seqs = append(seqs, c.Seq)
	}
	u := toolUpdate{SessionUpdate: "tool_call_update", ToolCallID: c.CallID, Name: c.Name, Title: c.Title, Kind: c.Kind,
		RawInput: c.Input, Meta: c.Meta}
	for _, l := range c.Locations {
		abs, ok := replay.AbsPath(r.roots, l.Path)
		if !ok {
			r.tally.Omit(c.ID, asr.LossRedactedRoot, "a location under a root whose path is redacted")
			continue
		}
		u.Locations = append(u.Locations, acpLocation{Path: abs, Line: l.Line})
	}
	var diffs []json.RawMessage
	for _, ch := range la.changeChains(far.changes) {
		l, err := r.src.lineAt(ch.off, ch.n)
		if err != nil {
			return err
		}
		d, seq, ok := r.diff(l)
		seqs = append(seqs, seq)
		if ok {
			diffs = append(diffs, d)
		}
	}
	resultAt := la.latest(asr.TypeToolResult, far.result, span{})
	if resultAt.ok() {
		l, err := r.src.lineAt(resultAt.off, resultAt.n)
		if err != nil {
			return err
		}
		var res toolResult
		if json.Unmarshal(l, &res) == nil {
			seqs = append(seqs, res.Seq)
			if st, ok := replay.ToolStatus(res.Status); ok {
				u.Status = st
			}
			display := res.DisplayContent
			if len(display) == 0 {
				display = res.Content
			}
			for _, b := range display {
				item, _ := asr.Marshal(contentItem{Type: "content", Content: b})
				u.Content = append(u.Content, item)
			}
			u.RawOutput = res.Raw
			u.Content = append(u.Content, diffs...)
			diffs = nil
			if res.Exec != nil && res.Exec.TerminalID != "" {
				item, _ := asr.Marshal(terminalItem{Type: "terminal", TerminalID: res.Exec.TerminalID})
				u.Content = append(u.Content, item)
			}
			if len(res.Meta) > 0 {
				if u.Meta == nil {
					u.Meta = metaMap{}
				}
				for k, v := range res.Meta {
					u.Meta[k] = v
				}
			}
		}
	}
	u.Content = append(u.Content, diffs...)
	return r.send(u, seqs)
}

// changeChains returns the latest record of each file change the front
// call caused, in order of first record: the chains in the lookahead (a
// revision continues the chain of the record it supersedes), each replaced
// by its far revision when the index has one, then the far chains.
func (l *lookahead) changeChains(far []changeSpan) []span {
	type chain struct {
		ids []string
		at  span
	}
	var chains []*chain
	of := map[string]*chain{}
	for _, pos := range l.changes[l.front().key] {
		if pos <= l.base {
			continue
		}
		a := &l.q[pos-l.base]
		e := &a.e
		c := of[e.Supersedes]
		if e.Supersedes == "" || c == nil {
			c = &chain{}
			chains = append(chains, c)
		}
		c.ids = append(c.ids, e.ID)
		c.at = a.at
		of[e.ID] = c
	}
	var out []span
	used := make([]bool, len(far))
	for _, c := range chains {
		at := c.at
		for i, f := range far {
			if !used[i] && slices.Contains(c.ids, f.first) {
				at, used[i] = f.at, true
			}
		}
		out = append(out, at)
	}
	for i, f := range far {
		if !used[i] {
			out = append(out, f.at)
		}
	}
	return out
}

// diff rebuilds a file change as a {type: diff} item with absolute paths;
// ok is false (and the loss tallied) when a path's root is redacted.
func (r *replayer) diff(line []byte) (json.RawMessage, uint64, bool) {
	var fc asr.FileChange
	if err := json.Unmarshal(line, &fc); err != nil {
		return nil, 0, false
	}
	d := diffItem{Type: "diff", Changes: []acpChange{}, Patch: fc.Patch}
	for _, c := range fc.Changes {
		ch := acpChange{Operation: c.Op, FileType: c.FileType, MimeType: c.MimeType, Meta: c.Meta}
		for _, p := range []struct {
			ref *asr.PathRef
			dst *string
		}{{c.Path, &ch.Path}, {c.OldPath, &ch.OldPath}} {
			if p.ref == nil {
				continue
			}
			abs, ok := replay.AbsPath(r.roots, *p.ref)
			if !ok {
				r.tally.Omit(fc.ID, asr.LossRedactedRoot, "a diff under a root whose path is redacted (ASR-729)")
				return nil, fc.Seq, false
			}
			*p.dst = abs
		}
		d.Changes = append(d.Changes, ch)
	}
	b, err := asr.Marshal(d)
	return b, fc.Seq, err == nil
}

type planUpdate struct {
	SessionUpdate string      `json:"sessionUpdate"`
	Plan          planContent `json:"plan"`
	Meta          metaMap     `json:"_meta,omitempty"`
}

type planContent struct {
	Type    string          `json:"type"`
	PlanID  string          `json:"planId"`
	Entries json.RawMessage `json:"entries"`
}

func (r *replayer) plan(line []byte, seqs []uint64) error {
	var p asr.Plan
	if err := json.Unmarshal(line, &p); err != nil {
		return r.undecodable(seqs, err)
	}
	typ := p.PlanType
	if typ == "" {
		typ = "items"
	}
	entries := p.Entries
	if len(entries) == 0 || string(entries) == "null" {
		entries = json.RawMessage("[]")
	}
	return r.send(planUpdate{SessionUpdate: "plan_update", Plan: planContent{Type: typ, PlanID: p.PlanID, Entries: entries}, Meta: p.Meta}, seqs)
}

type compactionUpdate struct {
	SessionUpdate string            `json:"sessionUpdate"`
	CompactionID  string            `json:"compactionId"`
	Status        string            `json:"status"`
	Summary       []json.RawMessage `json:"summary,omitempty"`
	Error         json.RawMessage   `json:"error,omitempty"`
	Meta          metaMap           `json:"_meta,omitempty"`
}

// compaction replays a compaction with its status (completed when absent)
// and summary; opaque content is never sent.
func (r *replayer) compaction(line []byte, seqs []uint64) error {
	var c asr.Compaction
	if err := json.Unmarshal(line, &c); err != nil {
		return r.undecodable(seqs, err)
	}
	status := c.Status
	if status == "" {
		status = "completed"
	}
	u := compactionUpdate{SessionUpdate: "compaction_update", CompactionID: c.CompactionID, Status: status, Summary: c.Summary, Meta: c.Meta}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		u.Error = c.Error
	}
	return r.send(u, seqs)
}

type terminalUpdate struct {
	SessionUpdate string          `json:"sessionUpdate"`
	TerminalID    string          `json:"terminalId"`
	Command       string          `json:"command,omitempty"`
	Cwd           string          `json:"cwd,omitempty"`
	Output        *terminalOutput `json:"output,omitempty"`
	ExitStatus    *exitStatus     `json:"exitStatus,omitempty"`
	Size          json.RawMessage `json:"size,omitempty"` // replays to TargetAlpha13 only
	Meta          metaMap         `json:"_meta,omitempty"`
}

type terminalOutput struct {
	Data string `json:"data"`
}

type exitStatus struct {
	ExitCode json.RawMessage `json:"exitCode,omitempty"`
	Signal   json.RawMessage `json:"signal,omitempty"`
}

// terminal replays a terminal as a display-only snapshot (ASR-726): its
// command, cwd, final output and exit status. No process is started.
func (r *replayer) terminal(line []byte, seqs []uint64) error {
	var t asr.Terminal
	if err := json.Unmarshal(line, &t); err != nil {
		return r.undecodable(seqs, err)
	}
	u := terminalUpdate{SessionUpdate: "terminal_update", TerminalID: t.TerminalID, Command: t.Command, Meta: t.Meta}
	if t.Cwd != nil {
		if abs, ok := replay.AbsPath(r.roots, *t.Cwd); ok {
			u.Cwd = abs
		} else {
			r.tally.Omit(t.ID, asr.LossRedactedRoot, "a terminal cwd under a root whose path is redacted")
		}
	}
	if t.Output != nil {
		if b, ok := replay.BlobBytes(t.Output.Blob); ok {
			u.Output = &terminalOutput{Data: base64.StdEncoding.EncodeToString(b)}
		} else {
			r.tally.Omit(t.ID, asr.LossUnreplayable, "terminal output that is not valid base64")
		}
	}
	if replay.TerminalExited(t.Status, t.ExitCode, t.Signal) {
		u.ExitStatus = &exitStatus{ExitCode: nullToNil(t.ExitCode), Signal: nullToNil(t.Signal)}
	}
	if r.target == TargetAlpha13 {
		u.Size = nullToNil(t.Size) // the draft's terminal size, as recorded
	}
	return r.send(u, seqs)
}

func nullToNil(b json.RawMessage) json.RawMessage {
	if string(b) == "null" {
		return nil
	}
	return b
}

type infoUpdate struct {
	SessionUpdate string          `json:"sessionUpdate"`
	Title         json.RawMessage `json:"title"`
	Meta          metaMap         `json:"_meta,omitempty"`
}

// sessionInfo sends the latest title, after the history.
func (r *replayer) sessionInfo(line []byte, seqs []uint64) error {
	var s asr.SessionInfo
	if json.Unmarshal(line, &s) != nil || len(s.Title) == 0 || string(s.Title) == "null" {
		return nil
	}
	return r.send(infoUpdate{SessionUpdate: "session_info_update", Title: s.Title, Meta: s.Meta}, seqs)
}

type usageUpdate struct {
	SessionUpdate string          `json:"sessionUpdate"`
	Used          json.RawMessage `json:"used"`
	Size          json.RawMessage `json:"size"`
	Cost          *asr.Cost       `json:"cost,omitempty"`
}

// usageUpdate sends the latest session-scope cumulative context window.
func (r *replayer) usageUpdate(line []byte, seqs []uint64) error {
	var u asr.UsageSummary
	if json.Unmarshal(line, &u) != nil || u.ContextWindow == nil {
		return nil
	}
	return r.send(usageUpdate{SessionUpdate: "usage_update", Used: u.ContextWindow.Used, Size: u.ContextWindow.Size, Cost: u.Cost}, seqs)
}

type stateUpdate struct {
	SessionUpdate string          `json:"sessionUpdate"`
	State         string          `json:"state"`
	StopReason    json.RawMessage `json:"stopReason,omitempty"`
	Error         json.RawMessage `json:"error,omitempty"`
}

// stateUpdate sends the current state: the latest state ACP knows
// ("resumed" and "ended" are the recorder's own).
func (r *replayer) stateUpdate(line []byte, seqs []uint64) error {
	var s asr.State
	if json.Unmarshal(line, &s) != nil {
		return nil
	}
	u := stateUpdate{SessionUpdate: "state_update", State: s.State, StopReason: nullToNil(s.StopReason)}
	if s.State == "idle" && string(s.StopReason) == `"error"` {
		u.Error = nullToNil(s.Error)
	}
	return r.send(u, seqs)
}
