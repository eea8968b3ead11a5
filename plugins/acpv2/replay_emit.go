package acpv2

import (
	"encoding/base64"
	"encoding/json"
	"strconv"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
	"github.com/acptap/acptap/sdk/replay"
)

// play is the second pass: each entity, at its first record, as one
// whole-entity upsert of its latest revision (ASR-724, ASR-725); then the
// title, the usage and the current state.
func (r *replayer) play() error {
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
		var e envelope
		if !e.scan(line) || e.Supersedes != "" {
			return nil // unreadable (reported by index), or a revision (sent at the first record)
		}
		switch e.Type {
		case asr.TypeMessage:
			if e.Origin == "notice" {
				return nil // ASR-730
			}
			return r.withLatest(e.entityKey(), line, e.Seq, r.message)
		case asr.TypeToolCall:
			return r.toolCall(&e, line)
		case asr.TypePlan:
			return r.withLatest(e.entityKey(), line, e.Seq, r.plan)
		case asr.TypeCompaction:
			return r.withLatest(e.entityKey(), line, e.Seq, r.compaction)
		case asr.TypeTerminal:
			return r.withLatest(e.entityKey(), line, e.Seq, r.terminal)
		}
		return nil
	})
	if err != nil {
		return err
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

// withLatest calls fn with the entity's latest record (this one, or its
// last revision) and the seqs of both.
func (r *replayer) withLatest(key string, line []byte, seq uint64, fn func([]byte, []uint64) error) error {
	at, ok := r.revised[key]
	if !ok {
		return fn(line, []uint64{seq})
	}
	latest, err := r.src.lineAt(at.off, at.n)
	if err != nil {
		return err
	}
	var e envelope
	e.scan(latest)
	return fn(latest, []uint64{seq, e.Seq})
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
		return nil
	}
	id := asr.RecordID(seqs[0])
	var content []json.RawMessage
	var thoughts []json.RawMessage // nil entries: reasoning without text
	for _, p := range m.Content {
		typ, o := replay.PartType(p)
		switch typ {
		case "reasoning":
			text, ok := replay.ReasoningText(o)
			if m.Role != "assistant" {
				r.tally.Omit(id, replay.LossReasoning, "a reasoning part in a "+strconv.Quote(m.Role)+" message")
				continue
			}
			if !ok {
				r.tally.Omit(id, replay.LossReasoning, "reasoning without text or summary (opaque reasoning is never sent)")
				thoughts = append(thoughts, nil)
				continue
			}
			if _, has := o["signature"]; has {
				r.tally.Add(replay.LossReasoning, 1, "reasoning signatures are never sent")
			}
			if _, has := o["opaque"]; has {
				r.tally.Add(replay.LossReasoning, 1, "opaque reasoning is never sent")
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
		r.tally.Omit(id, replay.LossUnreplayable, "a message with role "+strconv.Quote(m.Role)+" has no ACP update")
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
	Operation string `json:"operation"`
	OldPath   string `json:"oldPath,omitempty"`
	Path      string `json:"path,omitempty"`
	FileType  string `json:"fileType,omitempty"`
	MimeType  string `json:"mimeType,omitempty"`
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
func (r *replayer) toolCall(e *envelope, line []byte) error {
	seqs := []uint64{e.Seq}
	ts := r.tools[e.CallID]
	if ts != nil {
		ts.emitted = true
		if ts.call.ok() {
			l, err := r.src.lineAt(ts.call.off, ts.call.n)
			if err != nil {
				return err
			}
			line = l
		}
	}
	var c asr.ToolCall
	if err := json.Unmarshal(line, &c); err != nil {
		return nil
	}
	if c.Seq != e.Seq {
		seqs = append(seqs, c.Seq)
	}
	u := toolUpdate{SessionUpdate: "tool_call_update", ToolCallID: c.CallID, Name: c.Name, Title: c.Title, Kind: c.Kind,
		RawInput: c.Input, Meta: c.Meta}
	for _, l := range c.Locations {
		abs, ok := replay.AbsPath(r.roots, l.Path)
		if !ok {
			r.tally.Omit(c.ID, replay.LossRedactedRoot, "a location under a root whose path is redacted")
			continue
		}
		u.Locations = append(u.Locations, acpLocation{Path: abs, Line: l.Line})
	}
	var diffs []json.RawMessage
	if ts != nil {
		for _, ch := range ts.changes {
			l, err := r.src.lineAt(ch.at.off, ch.at.n)
			if err != nil {
				return err
			}
			d, seq, ok := r.diff(l)
			seqs = append(seqs, seq)
			if ok {
				diffs = append(diffs, d)
			}
		}
	}
	if ts != nil && ts.result.ok() {
		l, err := r.src.lineAt(ts.result.off, ts.result.n)
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

// diff rebuilds a file change as a {type: diff} item with absolute paths;
// ok is false (and the loss tallied) when a path's root is redacted.
func (r *replayer) diff(line []byte) (json.RawMessage, uint64, bool) {
	var fc asr.FileChange
	if err := json.Unmarshal(line, &fc); err != nil {
		return nil, 0, false
	}
	d := diffItem{Type: "diff", Changes: []acpChange{}, Patch: fc.Patch}
	for _, c := range fc.Changes {
		ch := acpChange{Operation: c.Op, FileType: c.FileType, MimeType: c.MimeType}
		for _, p := range []struct {
			ref *asr.PathRef
			dst *string
		}{{c.Path, &ch.Path}, {c.OldPath, &ch.OldPath}} {
			if p.ref == nil {
				continue
			}
			abs, ok := replay.AbsPath(r.roots, *p.ref)
			if !ok {
				r.tally.Omit(fc.ID, replay.LossRedactedRoot, "a diff under a root whose path is redacted (ASR-729)")
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
		return nil
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
		return nil
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
		return nil
	}
	u := terminalUpdate{SessionUpdate: "terminal_update", TerminalID: t.TerminalID, Command: t.Command, Meta: t.Meta}
	if t.Cwd != nil {
		if abs, ok := replay.AbsPath(r.roots, *t.Cwd); ok {
			u.Cwd = abs
		} else {
			r.tally.Omit(t.ID, replay.LossRedactedRoot, "a terminal cwd under a root whose path is redacted")
		}
	}
	if t.Output != nil {
		if b, ok := replay.BlobBytes(t.Output.Blob); ok {
			u.Output = &terminalOutput{Data: base64.StdEncoding.EncodeToString(b)}
		} else {
			r.tally.Omit(t.ID, replay.LossUnreplayable, "terminal output that is not valid base64")
		}
	}
	if replay.TerminalExited(t.Status, t.ExitCode, t.Signal) {
		u.ExitStatus = &exitStatus{ExitCode: nullToNil(t.ExitCode), Signal: nullToNil(t.Signal)}
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
