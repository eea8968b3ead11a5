package transcript

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/acptap/acptap/sdk/asr"
)

// builder folds records into items. Entities are keyed by type and their
// own id, so a tool call's result, its file change and its terminal land
// in the call's item, and a revision updates the item it revises.
type builder struct {
	o      Options
	from   uint64
	n      int
	v      *View
	byRec  map[string]int // record id → item
	byCall map[string]int // callId → tool item
	byTerm map[string]int // terminalId → item holding the terminal
	termOf map[string]string
	byKey  map[string]int // type+entity id → item (messages, plans, permissions, …)
	cur    int            // the index of the item item or tool returned last
}

func newBuilder(o Options) *builder {
	from := o.From
	if from == 0 {
		from = 1
	}
	return &builder{o: o, from: from, v: &View{Counts: map[string]int{}, From: from},
		byRec: map[string]int{}, byCall: map[string]int{}, byTerm: map[string]int{},
		termOf: map[string]string{}, byKey: map[string]int{}}
}

func (b *builder) header(line []byte, h asr.Header) {
	b.v.Header = json.RawMessage(string(line))
	b.v.SessionID = h.SessionID
	if b.from <= 1 {
		for _, c := range h.Producer.Lossy {
			b.v.Losses = append(b.v.Losses, Loss{Category: c, Record: "header"})
		}
	}
}

// item returns the item at key, or a new one for g.
func (b *builder) item(key, kind string, g asr.Generic) (*Item, bool) {
	if key != "" {
		if i, ok := b.byKey[key]; ok {
			b.cur = i
			return &b.v.Items[i], false
		}
	}
	if g.Supersedes != "" {
		if i, ok := b.byRec[g.Supersedes]; ok {
			b.cur = i
			return &b.v.Items[i], false
		}
	}
	b.v.Items = append(b.v.Items, Item{Kind: kind, Seq: g.Seq, ID: g.ID, TS: g.TS})
	b.cur = len(b.v.Items) - 1
	if key != "" {
		b.byKey[key] = b.cur
	}
	return &b.v.Items[b.cur], true
}

// attach notes that g went into it (the current item).
func (b *builder) attach(it *Item, g asr.Generic, line []byte) {
	b.byRec[g.ID] = b.cur
	if len(it.Records) > 0 && g.Supersedes != "" {
		it.Revised = true
	}
	it.Records = append(it.Records, g.ID)
	if g.Native != nil && g.Native.Ref != nil {
		it.Refs = append(it.Refs, Ref{Record: g.ID, Wire: g.Native.Ref.Wire, Frames: g.Native.Ref.Frames})
	}
	if b.o.WithJSON {
		it.JSON = append(it.JSON, json.RawMessage(string(line)))
	}
}

func (b *builder) add(g asr.Generic, line []byte) error {
	b.n++
	b.v.Counts[g.Type]++
	switch g.Type {
	case asr.TypeMessage:
		var m asr.Message
		if err := json.Unmarshal(line, &m); err != nil {
			return err
		}
		it, _ := b.item("message/"+m.MessageID, KindMessage, g)
		it.Role, it.Origin = m.Role, m.Origin
		if it.Origin == "" {
			it.Origin = m.Origin
		}
		it.Blocks = blocks(m.Content)
		it.Reasoning = len(it.Blocks) > 0
		for _, bl := range it.Blocks {
			if bl.Type != "reasoning" {
				it.Reasoning = false
			}
		}
		if m.From != nil {
			it.Child = m.From.Session
		} else if len(m.Recipients) > 0 {
			it.Child = m.Recipients[0].Actor.Session
		}
		if m.Severity != "" {
			it.Summary = m.Severity
		}
		b.attach(it, g, line)
	case asr.TypeToolCall:
		var c asr.ToolCall
		if err := json.Unmarshal(line, &c); err != nil {
			return err
		}
		it := b.tool(c.CallID, g)
		t := it.Tool
		t.Name, t.Title, t.Kind = c.Name, c.Title, c.Kind
		if len(c.Input) > 0 {
			t.Input = c.Input
		}
		t.Paths = t.Paths[:0]
		for _, l := range c.Locations {
			t.Paths = append(t.Paths, l.Path.Path)
		}
		b.attach(it, g, line)
	case asr.TypeToolResult:
		var r asr.ToolResult
		if err := json.Unmarshal(line, &r); err != nil {
			return err
		}
		it := b.tool(r.CallID, g)
		t := it.Tool
		t.Status = r.Status
		if n := len(t.Statuses); n == 0 || t.Statuses[n-1] != r.Status {
			t.Statuses = append(t.Statuses, r.Status)
		}
		t.Result = blocks(r.DisplayContent)
		if len(r.Raw) > 0 {
			t.Raw = r.Raw
		}
		if r.Exec != nil {
			b.termOf[r.Exec.TerminalID] = r.CallID
			if ti, ok := b.byTerm[r.Exec.TerminalID]; ok && b.v.Items[ti].Terminal != nil {
				t.Terminal = b.v.Items[ti].Terminal
			}
			b.byTerm[r.Exec.TerminalID] = b.cur
		}
		b.attach(it, g, line)
	case asr.TypeFileChange:
		var f asr.FileChange
		if err := json.Unmarshal(line, &f); err != nil {
			return err
		}
		diffs := fileDiffs(f)
		if f.Cause != nil && f.Cause.CallID != "" {
			it := b.tool(f.Cause.CallID, g)
			it.Tool.Diffs = diffs
			b.attach(it, g, line)
			break
		}
		it, _ := b.item("", KindFileChange, g)
		it.Diffs, it.Summary = diffs, f.Status
		b.attach(it, g, line)
	case asr.TypeTerminal:
		var t asr.Terminal
		if err := json.Unmarshal(line, &t); err != nil {
			return err
		}
		term := &Terminal{ID: t.TerminalID, Command: t.Command, Status: t.Status, Exit: strings.TrimSpace(string(t.ExitCode))}
		if t.Output != nil {
			term.Output = decodeBlob(t.Output.Blob)
		}
		var it *Item
		if i, ok := b.byTerm[t.TerminalID]; ok {
			it, b.cur = &b.v.Items[i], i
		} else {
			it, _ = b.item("terminal/"+t.TerminalID, KindTerminal, g)
			b.byTerm[t.TerminalID] = b.cur
		}
		if it.Tool != nil {
			it.Tool.Terminal = term
		} else {
			it.Terminal = term
		}
		b.attach(it, g, line)
	case asr.TypePermission:
		var p asr.Permission
		if err := json.Unmarshal(line, &p); err != nil {
			return err
		}
		it, _ := b.item("permission/"+p.RequestID, KindPermission, g)
		perm := &Permission{Title: p.Title, Description: p.Description, Status: p.Status, Decision: p.Decision}
		_ = json.Unmarshal(p.Options, &perm.Options)
		for _, o := range perm.Options {
			if o.ID == p.SelectedOptionID {
				perm.Selected = o.Name
			}
		}
		if perm.Selected == "" {
			perm.Selected = p.SelectedOptionID
		}
		it.Permission = perm
		b.attach(it, g, line)
	case asr.TypeInputRequest:
		var q asr.InputRequest
		if err := json.Unmarshal(line, &q); err != nil {
			return err
		}
		it, _ := b.item("input/"+q.RequestID, KindInput, g)
		it.Input = &Input{Mode: q.Mode, Message: q.Message, Status: q.Status, Response: q.Response, URL: q.URL}
		b.attach(it, g, line)
	case asr.TypePlan:
		var p asr.Plan
		if err := json.Unmarshal(line, &p); err != nil {
			return err
		}
		it, _ := b.item("plan/"+p.PlanID, KindPlan, g)
		it.Plan = nil
		_ = json.Unmarshal(p.Entries, &it.Plan)
		b.attach(it, g, line)
	case asr.TypeState:
		var s asr.State
		if err := json.Unmarshal(line, &s); err != nil {
			return err
		}
		it, _ := b.item("", KindState, g)
		it.State = &State{State: s.State, StopReason: unquote(s.StopReason), Error: s.Error}
		b.attach(it, g, line)
	case asr.TypeUsageSummary:
		var u asr.UsageSummary
		if err := json.Unmarshal(line, &u); err != nil {
			return err
		}
		it, _ := b.item("", KindUsage, g)
		us := &Usage{}
		if u.ContextWindow != nil {
			us.Used, us.Size = num(u.ContextWindow.Used), num(u.ContextWindow.Size)
		}
		if u.Cost != nil {
			us.Cost, us.Currency = num(u.Cost.Amount), u.Cost.Currency
		}
		it.Usage = us
		b.attach(it, g, line)
	case asr.TypeCompaction:
		var c asr.Compaction
		if err := json.Unmarshal(line, &c); err != nil {
			return err
		}
		it, _ := b.item("compaction/"+c.CompactionID, KindCompaction, g)
		it.Blocks, it.Summary = blocks(c.Summary), c.Kind
		b.attach(it, g, line)
	case asr.TypeSubagent:
		var s asr.Subagent
		if err := json.Unmarshal(line, &s); err != nil {
			return err
		}
		it, _ := b.item("subagent/"+s.ChildSession, KindSubagent, g)
		it.Child = s.ChildSession
		b.attach(it, g, line)
	case asr.TypeSessionInfo:
		var s asr.SessionInfo
		if err := json.Unmarshal(line, &s); err != nil {
			return err
		}
		it, _ := b.item("session_info", KindSessionInfo, g)
		it.Summary = unquote(s.Title)
		b.attach(it, g, line)
	case asr.TypeConfigChange:
		var c asr.ConfigChange
		if err := json.Unmarshal(line, &c); err != nil {
			return err
		}
		it, _ := b.item("", KindConfig, g)
		var parts []string
		if c.Mode != "" {
			parts = append(parts, "mode "+c.Mode)
		}
		if c.Model != nil {
			parts = append(parts, "model "+c.Model.ID)
		}
		if len(parts) == 0 && len(c.Options) > 0 {
			parts = append(parts, "options changed")
		}
		it.Summary = strings.Join(parts, ", ")
		b.attach(it, g, line)
	case asr.TypeDeclaration:
		var d asr.Declaration
		if err := json.Unmarshal(line, &d); err != nil {
			return err
		}
		it, _ := b.item("", KindDeclaration, g)
		it.Lossy = d.Lossy
		for _, c := range d.Lossy {
			b.v.Losses = append(b.v.Losses, Loss{Category: c, Record: d.ID})
		}
		b.attach(it, g, line)
	default:
		kind := KindOther
		if strings.HasPrefix(g.Type, asr.AuditPrefix) {
			kind = KindAudit
		}
		it, _ := b.item("", kind, g)
		it.Audit = strings.TrimPrefix(g.Type, asr.AuditPrefix)
		it.Summary = g.Type
		b.attach(it, g, line)
	}
	return nil
}

func (b *builder) tool(callID string, g asr.Generic) *Item {
	if i, ok := b.byCall[callID]; ok {
		b.cur = i
		return &b.v.Items[i]
	}
	it, _ := b.item("tool/"+callID, KindTool, g)
	if it.Tool == nil {
		it.Tool = &Tool{CallID: callID}
	}
	b.byCall[callID] = b.cur
	return it
}

// blocks turns ACP content blocks (and ASR's reasoning and refusal) into
// display blocks.
func blocks(raw []json.RawMessage) []Block {
	var out []Block
	for _, r := range raw {
		var c struct {
			Type     string          `json:"type"`
			Text     string          `json:"text"`
			URI      string          `json:"uri"`
			Name     string          `json:"name"`
			MimeType string          `json:"mimeType"`
			Path     string          `json:"path"`
			OldText  *string         `json:"oldText"`
			NewText  string          `json:"newText"`
			Resource json.RawMessage `json:"resource"`
			TermID   string          `json:"terminalId"`
			Content  json.RawMessage `json:"content"`
		}
		if json.Unmarshal(r, &c) != nil {
			continue
		}
		switch c.Type {
		case "text", "reasoning", "refusal":
			out = append(out, Block{Type: c.Type, Text: c.Text})
		case "image", "audio":
			out = append(out, Block{Type: c.Type, Mime: c.MimeType, Text: c.URI})
		case "resource_link":
			out = append(out, Block{Type: c.Type, Text: firstNonEmpty(c.URI, c.Name), Mime: c.MimeType})
		case "resource":
			var res struct {
				URI  string `json:"uri"`
				Text string `json:"text"`
			}
			_ = json.Unmarshal(c.Resource, &res)
			out = append(out, Block{Type: c.Type, Text: firstNonEmpty(res.Text, res.URI)})
		case "diff":
			old := ""
			if c.OldText != nil {
				old = *c.OldText
			}
			out = append(out, Block{Type: "diff", Text: unified(c.Path, old, c.NewText)})
		case "terminal":
			out = append(out, Block{Type: "terminal", Text: c.TermID})
		case "content":
			out = append(out, blocks([]json.RawMessage{c.Content})...)
		default:
			out = append(out, Block{Type: "other", Text: string(r)})
		}
	}
	return out
}

func fileDiffs(f asr.FileChange) []Diff {
	var out []Diff
	for _, c := range f.Changes {
		d := Diff{Op: c.Op}
		if c.Path != nil {
			d.Path = c.Path.Path
		}
		if m, ok := c.Meta["acptap/v1Diff"]; ok {
			var v struct {
				OldText *string `json:"oldText"`
				NewText string  `json:"newText"`
			}
			if json.Unmarshal(m, &v) == nil {
				old := ""
				if v.OldText != nil {
					old = *v.OldText
				}
				d.Patch = unified(d.Path, old, v.NewText)
			}
		}
		out = append(out, d)
	}
	if f.Patch != nil && f.Patch.Text != "" {
		if len(out) == 1 {
			out[0].Patch = f.Patch.Text
		} else {
			out = append(out, Diff{Op: "patch", Patch: f.Patch.Text})
		}
	}
	return out
}

// unified writes a whole-file diff of old → new: every old line removed,
// every new line added, lines common to both ends kept as context.
func unified(path, old, new string) string {
	ol, nl := splitLines(old), splitLines(new)
	pre := 0
	for pre < len(ol) && pre < len(nl) && ol[pre] == nl[pre] {
		pre++
	}
	suf := 0
	for suf < len(ol)-pre && suf < len(nl)-pre && ol[len(ol)-1-suf] == nl[len(nl)-1-suf] {
		suf++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "--- a/%s\n+++ b/%s\n@@ -%d,%d +%d,%d @@\n", path, path, pre+1, len(ol)-pre-suf, pre+1, len(nl)-pre-suf)
	for _, l := range ol[pre : len(ol)-suf] {
		b.WriteString("-" + l + "\n")
	}
	for _, l := range nl[pre : len(nl)-suf] {
		b.WriteString("+" + l + "\n")
	}
	return b.String()
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

func decodeBlob(b asr.Blob) string {
	if b.Encoding == "base64" {
		d, err := base64.StdEncoding.DecodeString(b.Data)
		if err == nil {
			return string(d)
		}
	}
	return b.Data
}

func unquote(r json.RawMessage) string {
	var s string
	if json.Unmarshal(r, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(r))
}

func num(r json.RawMessage) float64 {
	f, _ := strconv.ParseFloat(strings.TrimSpace(string(r)), 64)
	return f
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
