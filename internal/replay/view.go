package replay

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/acptap/acptap/sdk/asr"
)

// Stream is a stream read for the round trip: its header and its context
// view at the primary head (asr.ContextView), grouped into the ACP entity
// each context entity belongs to: a message; a tool call with its result
// and the file changes it caused; a plan; a compaction; a terminal. Groups
// are in the order of their first record.
type Stream struct {
	Header asr.Header
	Groups []*Group
	// Lossy is what the stream declares lost: its header's producer.lossy
	// and its declarations' (asr.EffectiveHeader).
	Lossy []string
}

// Group is one ACP entity's latest records.
type Group struct {
	// Key is "<kind>:<ACP id>" ("message:m1", "tool:call_1", …), or
	// "file_change:<record id>" for a change no call caused.
	Key  string
	Kind string
	// Message, plan, compaction or terminal: the latest record.
	Rec json.RawMessage
	// Tool call: the latest tool_call, tool_result and file_changes (by
	// entity, in order of first record).
	Call, Result json.RawMessage
	Changes      []json.RawMessage
	// ID is the id of the group's first record.
	ID string
}

// Kinds of groups.
const (
	KindMessage    = "message"
	KindTool       = "tool"
	KindPlan       = "plan"
	KindCompaction = "compaction"
	KindTerminal   = "terminal"
	KindFileChange = "file_change"
)

// ReadStream reads a stream (header first) and its context view. The view
// holds every context entity's latest record: it is for checking, not for
// replaying large streams.
func ReadStream(r io.Reader) (*Stream, error) {
	hc := &headCapture{r: r}
	view, err := asr.ContextView(hc)
	if err != nil {
		return nil, err
	}
	line, _, _ := bytes.Cut(hc.buf, []byte("\n"))
	h, err := asr.ReadHeader(line)
	if err != nil {
		return nil, err
	}
	s := &Stream{Header: h, Lossy: slices.Clone(h.Producer.Lossy)}
	for c := range hc.lossy {
		if !slices.Contains(s.Lossy, c) {
			s.Lossy = append(s.Lossy, c)
		}
	}
	slices.Sort(s.Lossy)
	byKey := map[string]*Group{}
	group := func(kind, id, first string) *Group {
		key := kind + ":" + id
		g, ok := byKey[key]
		if !ok {
			g = &Group{Key: key, Kind: kind, ID: first}
			byKey[key] = g
			s.Groups = append(s.Groups, g)
		}
		return g
	}
	for _, e := range view {
		rec := json.RawMessage(e.Latest.Line)
		switch e.Type {
		case asr.TypeMessage:
			group(KindMessage, e.Key, e.First).Rec = rec
		case asr.TypePlan:
			group(KindPlan, e.Key, e.First).Rec = rec
		case asr.TypeCompaction:
			group(KindCompaction, e.Key, e.First).Rec = rec
		case asr.TypeTerminal:
			group(KindTerminal, e.Key, e.First).Rec = rec
		case asr.TypeToolCall:
			group(KindTool, e.Key, e.First).Call = rec
		case asr.TypeToolResult:
			group(KindTool, e.Key, e.First).Result = rec
		case asr.TypeFileChange:
			var fc struct {
				Cause *asr.Cause `json:"cause"`
			}
			_ = json.Unmarshal(rec, &fc)
			kind, id := KindFileChange, e.Key
			if fc.Cause != nil && fc.Cause.CallID != "" {
				kind, id = KindTool, fc.Cause.CallID
			}
			g := group(kind, id, e.First)
			g.Changes = append(g.Changes, rec)
		}
	}
	return s, nil
}

// headCapture passes a reader through, keeps its bytes up to the first
// LF, and collects the loss categories its declaration records add.
type headCapture struct {
	r     io.Reader
	buf   []byte
	done  bool
	part  []byte // the line being read, after the header
	lossy map[string]bool
}

var markDeclaration = []byte(`"` + asr.TypeDeclaration + `"`)

func (h *headCapture) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	chunk := p[:n]
	if !h.done && n > 0 {
		head := chunk
		if i := bytes.IndexByte(chunk, '\n'); i >= 0 {
			head, h.done = chunk[:i+1], true
			chunk = chunk[i+1:]
		} else {
			chunk = nil
		}
		h.buf = append(h.buf, head...)
	}
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			h.part = append(h.part, chunk...)
			break
		}
		line := chunk[:i]
		if len(h.part) > 0 {
			line = append(h.part, line...)
		}
		h.declaration(line)
		h.part = h.part[:0]
		chunk = chunk[i+1:]
	}
	return n, err
}

func (h *headCapture) declaration(line []byte) {
	if !bytes.Contains(line, markDeclaration) {
		return
	}
	var d asr.Declaration
	if json.Unmarshal(line, &d) != nil || d.Type != asr.TypeDeclaration {
		return
	}
	for _, c := range d.Lossy {
		if h.lossy == nil {
			h.lossy = map[string]bool{}
		}
		h.lossy[c] = true
	}
}

// Roots returns the stream's workspace roots.
func (s *Stream) Roots() []asr.Root {
	if s.Header.Workspace == nil {
		return nil
	}
	return s.Header.Workspace.Roots
}

// Entity is one entity of a normalized view: the fields the round trip
// compares (ASR-732), as decoded JSON.
type Entity struct {
	Key    string
	Fields map[string]any
}

// Drop is something the replay leaves out of an entity, and the loss
// category that must be reported for it.
type Drop struct {
	Key      string
	Category string
	What     string
}

// Normalize turns a stream's view into the entities the replay presents,
// applying the replay mapping's rules: reasoning parts of a message with
// other parts become thoughts with derived IDs before it (ASR-727);
// refusals become text; tool statuses are mapped (ASR-728); paths are
// absolute (ASR-729); a result whose status ACP cannot carry as final and
// that carries nothing is not recorded again (the recording rule for
// status "other"). What the replay must leave out is returned as drops.
func Normalize(s *Stream) ([]Entity, []Drop) {
	n := &normalizer{roots: s.Roots()}
	for _, g := range s.Groups {
		switch g.Kind {
		case KindMessage:
			n.message(g)
		case KindTool:
			n.tool(g)
		case KindPlan:
			n.plan(g)
		case KindCompaction:
			n.compaction(g)
		case KindTerminal:
			n.terminal(g)
		case KindFileChange:
			n.drop(g.Key, asr.LossUnreplayable, "a file change no tool call caused")
		}
	}
	return n.out, n.drops
}

type normalizer struct {
	roots []asr.Root
	out   []Entity
	drops []Drop
}

func (n *normalizer) drop(key, category, what string) {
	n.drops = append(n.drops, Drop{Key: key, Category: category, What: what})
}

func (n *normalizer) add(key string, fields map[string]any) {
	n.out = append(n.out, Entity{Key: key, Fields: fields})
}

func (n *normalizer) message(g *Group) {
	var m struct {
		MessageID string            `json:"messageId"`
		Role      string            `json:"role"`
		Content   []json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(g.Rec, &m); err != nil {
		n.drop(g.Key, asr.LossUnreplayable, "a message that does not decode")
		return
	}
	if m.Role != "user" && m.Role != "assistant" {
		n.drop(g.Key, asr.LossUnreplayable, fmt.Sprintf("a message with role %q", m.Role))
		return
	}
	var content []any
	var thoughts []string
	var thoughtOK []bool
	for _, p := range m.Content {
		typ, o := PartType(p)
		if o == nil {
			n.drop(g.Key, asr.LossUnreplayable, "a content part that is not an object")
			continue
		}
		switch typ {
		case "reasoning":
			text, ok := ReasoningText(o)
			if m.Role == "user" {
				n.drop(g.Key, asr.LossReasoning, "a reasoning part in a user message")
				continue
			}
			thoughts = append(thoughts, text)
			thoughtOK = append(thoughtOK, ok)
		case "refusal":
			var r struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(p, &r)
			content = append(content, decode(TextBlock(r.Text)))
		default:
			content = append(content, decode(p))
		}
	}
	if m.Role == "assistant" && len(thoughts) > 0 && len(content) == 0 {
		// A reasoning-only message is one agent_thought: its texts joined.
		var text strings.Builder
		found := false
		for i, t := range thoughts {
			if !thoughtOK[i] {
				n.drop(g.Key, asr.LossReasoning, "reasoning without text or summary")
				continue
			}
			text.WriteString(t)
			found = true
		}
		if !found {
			return
		}
		n.add(g.Key, map[string]any{"role": "assistant", "content": []any{reasoningPart(text.String())}})
		return
	}
	for i, t := range thoughts {
		key := KindMessage + ":" + ThoughtID(m.MessageID, i)
		if !thoughtOK[i] {
			n.drop(key, asr.LossReasoning, "reasoning without text or summary")
			continue
		}
		n.add(key, map[string]any{"role": "assistant", "content": []any{reasoningPart(t)}})
	}
	if content == nil {
		content = []any{}
	}
	n.add(g.Key, map[string]any{"role": m.Role, "content": content})
}

func reasoningPart(text string) any {
	return map[string]any{"type": "reasoning", "text": text}
}

type toolCallRec struct {
	Name      string            `json:"name"`
	Title     string            `json:"title"`
	Kind      string            `json:"kind"`
	Input     json.RawMessage   `json:"input"`
	Locations []json.RawMessage `json:"locations"`
}

type toolResultRec struct {
	Status         string            `json:"status"`
	DisplayContent []json.RawMessage `json:"displayContent"`
	Content        json.RawMessage   `json:"content"`
	Raw            json.RawMessage   `json:"raw"`
	Exec           *asr.Exec         `json:"exec"`
}

func (n *normalizer) tool(g *Group) {
	if g.Call == nil {
		n.drop(g.Key, asr.LossUnreplayable, "a tool result or file change without its tool call")
		return
	}
	var c toolCallRec
	if err := json.Unmarshal(g.Call, &c); err != nil {
		n.drop(g.Key, asr.LossUnreplayable, "a tool call that does not decode")
		return
	}
	f := map[string]any{"name": c.Name, "title": c.Title, "kind": c.Kind, "input": decodeOpt(c.Input)}
	var locs []any
	for _, l := range c.Locations {
		var loc struct {
			Path asr.PathRef     `json:"path"`
			Line json.RawMessage `json:"line"`
		}
		_ = json.Unmarshal(l, &loc)
		abs, ok := AbsPath(n.roots, loc.Path)
		if !ok {
			n.drop(g.Key, asr.LossRedactedRoot, "a location under a redacted root")
			continue
		}
		locs = append(locs, map[string]any{"path": abs, "line": decodeOpt(loc.Line)})
	}
	f["locations"] = locs
	var changes []any
	for _, ch := range g.Changes {
		v, ok := n.change(ch)
		if !ok {
			n.drop(g.Key, asr.LossRedactedRoot, "a diff under a redacted root")
			continue
		}
		changes = append(changes, v)
	}
	f["changes"] = changes
	f["result"] = nil
	if g.Result != nil {
		var r toolResultRec
		_ = json.Unmarshal(g.Result, &r)
		status, ok := ToolStatus(r.Status)
		display := decodeList(r.DisplayContent)
		if display == nil && len(r.Content) > 0 {
			var blocks []json.RawMessage
			if json.Unmarshal(r.Content, &blocks) == nil {
				display = decodeList(blocks)
			}
		}
		terminal := ""
		if r.Exec != nil {
			terminal = r.Exec.TerminalID
		}
		carries := display != nil || len(r.Raw) > 0 || terminal != "" || len(changes) > 0
		switch {
		case !ok && r.Status == "partial":
			n.drop(g.Key, asr.LossCapture, "a partial tool result (a snapshot, not a result)")
		case !ok:
			n.drop(g.Key, asr.LossUnreplayable, "a tool result without a status")
		case !FinalToolStatus(status) && !carries:
			// Recording status "other" or a vendor status writes a result
			// only when the call has content or rawOutput.
		default:
			f["result"] = map[string]any{"status": status, "displayContent": display, "raw": decodeOpt(r.Raw), "terminalId": terminal}
		}
	}
	n.add(g.Key, f)
}

// change is a file change's compared form: its operations with absolute
// paths, and its patch. ok is false when a path's root is redacted.
func (n *normalizer) change(rec json.RawMessage) (any, bool) {
	var fc struct {
		Changes []asr.Change `json:"changes"`
		Patch   *asr.Patch   `json:"patch"`
	}
	_ = json.Unmarshal(rec, &fc)
	var ops []any
	for _, c := range fc.Changes {
		op := map[string]any{"op": c.Op, "fileType": c.FileType, "mimeType": c.MimeType, "path": nil, "oldPath": nil}
		for k, ref := range map[string]*asr.PathRef{"path": c.Path, "oldPath": c.OldPath} {
			if ref == nil {
				continue
			}
			abs, ok := AbsPath(n.roots, *ref)
			if !ok {
				return nil, false
			}
			op[k] = abs
		}
		ops = append(ops, op)
	}
	var patch any
	if fc.Patch != nil {
		patch = map[string]any{"format": fc.Patch.Format, "text": fc.Patch.Text}
	}
	return map[string]any{"changes": ops, "patch": patch}, true
}

func (n *normalizer) plan(g *Group) {
	var p struct {
		PlanType string          `json:"planType"`
		Entries  json.RawMessage `json:"entries"`
	}
	if err := json.Unmarshal(g.Rec, &p); err != nil {
		n.drop(g.Key, asr.LossUnreplayable, "a plan that does not decode")
		return
	}
	if p.PlanType == "" {
		p.PlanType = "items"
	}
	n.add(g.Key, map[string]any{"planType": p.PlanType, "entries": decodeOpt(p.Entries)})
}

func (n *normalizer) compaction(g *Group) {
	var c struct {
		Status  string            `json:"status"`
		Summary []json.RawMessage `json:"summary"`
		Error   json.RawMessage   `json:"error"`
	}
	if err := json.Unmarshal(g.Rec, &c); err != nil {
		n.drop(g.Key, asr.LossUnreplayable, "a compaction that does not decode")
		return
	}
	if c.Status == "" {
		c.Status = "completed"
	}
	n.add(g.Key, map[string]any{"status": c.Status, "summary": decodeList(c.Summary), "error": decodeOpt(c.Error)})
}

func (n *normalizer) terminal(g *Group) {
	var t struct {
		Status   string          `json:"status"`
		Command  string          `json:"command"`
		Cwd      *asr.PathRef    `json:"cwd"`
		ExitCode json.RawMessage `json:"exitCode"`
		Signal   json.RawMessage `json:"signal"`
		Output   *asr.Output     `json:"output"`
	}
	if err := json.Unmarshal(g.Rec, &t); err != nil {
		n.drop(g.Key, asr.LossUnreplayable, "a terminal that does not decode")
		return
	}
	f := map[string]any{"command": t.Command, "cwd": nil, "exited": TerminalExited(t.Status, t.ExitCode, t.Signal),
		"exitCode": decodeOpt(t.ExitCode), "signal": decodeOpt(t.Signal), "output": nil}
	if t.Cwd != nil {
		if abs, ok := AbsPath(n.roots, *t.Cwd); ok {
			f["cwd"] = abs
		} else {
			n.drop(g.Key, asr.LossRedactedRoot, "a terminal cwd under a redacted root")
		}
	}
	if t.Output != nil {
		if b, ok := BlobBytes(t.Output.Blob); ok {
			f["output"] = base64.StdEncoding.EncodeToString(b)
		} else {
			n.drop(g.Key, asr.LossUnreplayable, "terminal output that is not valid base64")
		}
	}
	n.add(g.Key, f)
}

// TerminalExited reports whether a terminal record says the terminal
// exited: its status, or an exit code or signal.
func TerminalExited(status string, exitCode, signal json.RawMessage) bool {
	return status == "exited" || (len(exitCode) > 0 && string(exitCode) != "null") || (len(signal) > 0 && string(signal) != "null")
}

// BlobBytes decodes a blob: base64, or text in any other encoding
// ("utf-8", "text") taken as its bytes.
func BlobBytes(b asr.Blob) ([]byte, bool) {
	if b.Encoding == "" || b.Encoding == "base64" {
		out, err := base64.StdEncoding.DecodeString(b.Data)
		return out, err == nil
	}
	return []byte(b.Data), true
}

// decode turns JSON into a comparable value (numbers kept as written).
func decode(b []byte) any {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return string(b)
	}
	return v
}

// decodeOpt is decode, with absent and null as nil.
func decodeOpt(b json.RawMessage) any {
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	return decode(b)
}

// decodeList decodes blocks; an empty list is nil.
func decodeList(items []json.RawMessage) []any {
	if len(items) == 0 {
		return nil
	}
	out := make([]any, len(items))
	for i, x := range items {
		out[i] = decode(x)
	}
	return out
}
