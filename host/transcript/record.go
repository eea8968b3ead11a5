package transcript

import (
	"encoding/base64"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/acptap/acptap/sdk/asr"
)

// recordType is what the transcript knows of one record type: how to
// decode it into an item and how to fold it into the view.
type recordType struct {
	decode func(g asr.Generic, it *Item) error
	fold   func(b *builder, r *Record)
}

// recordTypes is the table of record types; a type not in it is a vendor
// or audit record (decodeOther, foldNew).
var recordTypes map[string]recordType

func init() {
	recordTypes = map[string]recordType{
		asr.TypeMessage:                        {decodeMessage, foldKeyed},
		asr.TypeToolCall:                       {decodeToolCall, foldToolCall},
		asr.TypeToolResult:                     {decodeToolResult, foldToolResult},
		asr.TypeFileChange:                     {decodeFileChange, foldFileChange},
		asr.TypeTerminal:                       {decodeTerminal, foldTerminal},
		asr.TypePermission:                     {decodePermission, foldKeyed},
		asr.TypeInputRequest:                   {decodeInput, foldKeyed},
		asr.TypePlan:                           {decodePlan, foldKeyed},
		asr.TypeState:                          {decodeState, foldNew},
		asr.TypeUsageSummary:                   {decodeUsage, foldNew},
		asr.TypeCompaction:                     {decodeCompaction, foldKeyed},
		asr.TypeSubagent:                       {decodeSubagent, foldKeyed},
		asr.TypeSessionInfo:                    {decodeSessionInfo, foldKeyed},
		asr.TypeConfigChange:                   {decodeConfig, foldNew},
		asr.TypeDeclaration:                    {decodeDeclaration, foldDeclaration},
		asr.AuditPrefix + asr.AuditPromptError: {decodePromptError, foldNew},
	}
}

func decode(g asr.Generic, line int) (*Record, error) {
	ts := g.TS
	if ts == "" {
		ts = g.ObservedAt
	}
	r := &Record{Line: line, Type: g.Type, TS: ts, Supersedes: g.Supersedes, Native: g.Native,
		Item: Item{Seq: g.Seq, ID: g.ID, TS: g.TS, Status: g.Status}}
	t, ok := recordTypes[g.Type]
	if !ok {
		t.decode = decodeOther
	}
	if err := t.decode(g, &r.Item); err != nil {
		return nil, err
	}
	return r, nil
}

// into decodes a record's body.
func into[T any](g asr.Generic) (*T, error) {
	v := new(T)
	if err := json.Unmarshal(g.Line, v); err != nil {
		return nil, err
	}
	return v, nil
}

func decodeMessage(g asr.Generic, it *Item) error {
	m, err := into[asr.Message](g)
	if err != nil {
		return err
	}
	it.Kind, it.Entity = KindMessage, m.MessageID
	it.Role, it.Origin, it.Author, it.Severity = m.Role, m.Origin, m.Author, m.Severity
	it.Blocks = blocks(m.Content)
	it.Reasoning = len(it.Blocks) > 0
	for _, bl := range it.Blocks {
		if bl.Type != "reasoning" {
			it.Reasoning = false
		}
	}
	if m.From != nil {
		it.From, it.Child = m.From.Session, m.From.Session
	} else if len(m.Recipients) > 0 {
		it.Child = m.Recipients[0].Actor.Session
	}
	it.Summary = m.Severity
	return nil
}

func decodeToolCall(g asr.Generic, it *Item) error {
	c, err := into[asr.ToolCall](g)
	if err != nil {
		return err
	}
	it.Kind, it.Entity = KindTool, c.CallID
	t := &Tool{CallID: c.CallID, Name: c.Name, Title: c.Title, Kind: c.Kind, Input: c.Input}
	for _, l := range c.Locations {
		p := DisplayPath(&l.Path)
		if len(l.Line) > 0 && string(l.Line) != "null" {
			p += ":" + string(l.Line)
		}
		t.Paths = append(t.Paths, p)
	}
	it.Tool = t
	return nil
}

func decodeToolResult(g asr.Generic, it *Item) error {
	r, err := into[asr.ToolResult](g)
	if err != nil {
		return err
	}
	it.Kind, it.Entity = KindTool, r.CallID
	t := &Tool{CallID: r.CallID, Status: r.Status, Result: blocks(r.DisplayContent), Raw: r.Raw}
	if r.Status != "" {
		t.Statuses = []string{r.Status}
	}
	if r.Exec != nil {
		t.Exec = r.Exec.TerminalID
	}
	it.Tool = t
	return nil
}

func decodeFileChange(g asr.Generic, it *Item) error {
	f, err := into[asr.FileChange](g)
	if err != nil {
		return err
	}
	it.Kind, it.Diffs, it.Summary = KindFileChange, fileDiffs(*f), f.Status
	if f.Cause != nil {
		it.Cause = f.Cause.CallID
	}
	return nil
}

func decodeTerminal(g asr.Generic, it *Item) error {
	t, err := into[asr.Terminal](g)
	if err != nil {
		return err
	}
	it.Kind, it.Entity = KindTerminal, t.TerminalID
	term := &Terminal{ID: t.TerminalID, Command: t.Command, Status: t.Status}
	if e := strings.TrimSpace(string(t.ExitCode)); e != "null" {
		term.Exit = e
	}
	if s := strings.Trim(string(t.Signal), `"`); s != "null" {
		term.Signal = s
	}
	if t.Cwd != nil {
		term.Cwd = DisplayPath(t.Cwd)
	}
	if t.Output != nil {
		term.HasOutput = true
		term.Output, term.Binary, term.NotBase64 = decodeBlob(t.Output.Blob)
	}
	it.Terminal = term
	return nil
}

func decodePermission(g asr.Generic, it *Item) error {
	p, err := into[asr.Permission](g)
	if err != nil {
		return err
	}
	it.Kind, it.Entity = KindPermission, p.RequestID
	perm := &Permission{RequestID: p.RequestID, Title: p.Title, Description: p.Description, Status: p.Status,
		Decision: p.Decision, SelectedID: p.SelectedOptionID}
	_ = json.Unmarshal(p.Options, &perm.Options)
	for _, o := range perm.Options {
		if o.ID == p.SelectedOptionID {
			perm.Selected = o.Name
		}
	}
	if perm.Selected == "" {
		perm.Selected = p.SelectedOptionID
	}
	var subj struct {
		CallID  string `json:"callId"`
		Command string `json:"command"`
	}
	_ = json.Unmarshal(p.Subject, &subj)
	perm.CallID, perm.Command = subj.CallID, subj.Command
	it.Permission = perm
	return nil
}

func decodeInput(g asr.Generic, it *Item) error {
	q, err := into[asr.InputRequest](g)
	if err != nil {
		return err
	}
	it.Kind, it.Entity = KindInput, q.RequestID
	it.Input = &Input{RequestID: q.RequestID, Mode: q.Mode, Message: q.Message, Status: q.Status, Response: q.Response, URL: q.URL}
	return nil
}

func decodePlan(g asr.Generic, it *Item) error {
	p, err := into[asr.Plan](g)
	if err != nil {
		return err
	}
	it.Kind, it.Entity = KindPlan, p.PlanID
	_ = json.Unmarshal(p.Entries, &it.Plan)
	return nil
}

func decodeState(g asr.Generic, it *Item) error {
	s, err := into[asr.State](g)
	if err != nil {
		return err
	}
	it.Kind = KindState
	st := &State{State: s.State, StopReason: unquote(s.StopReason), Background: backgroundWork(s.Native)}
	if string(s.Error) != "null" {
		st.Error = s.Error
	}
	it.State = st
	return nil
}

func decodeUsage(g asr.Generic, it *Item) error {
	u, err := into[asr.UsageSummary](g)
	if err != nil {
		return err
	}
	it.Kind = KindUsage
	us := &Usage{Scope: u.Scope}
	if u.ContextWindow != nil {
		us.Window = true
		us.Used, us.Size = num(u.ContextWindow.Used), num(u.ContextWindow.Size)
	}
	if u.Cost != nil {
		us.Priced = true
		us.Cost, us.Currency = num(u.Cost.Amount), u.Cost.Currency
	}
	it.Usage = us
	return nil
}

func decodeCompaction(g asr.Generic, it *Item) error {
	c, err := into[asr.Compaction](g)
	if err != nil {
		return err
	}
	it.Kind, it.Entity = KindCompaction, c.CompactionID
	it.Blocks, it.Summary = blocks(c.Summary), c.Kind
	if c.Replaces != nil {
		it.Through = c.Replaces.ThroughID
	}
	if string(c.Error) != "null" {
		it.Error = c.Error
	}
	return nil
}

func decodeSubagent(g asr.Generic, it *Item) error {
	s, err := into[asr.Subagent](g)
	if err != nil {
		return err
	}
	it.Kind, it.Entity, it.Child, it.Cause = KindSubagent, s.ChildSession, s.ChildSession, s.CallID
	return nil
}

func decodeSessionInfo(g asr.Generic, it *Item) error {
	s, err := into[asr.SessionInfo](g)
	if err != nil {
		return err
	}
	// one per session: every session_info revises the title
	it.Kind, it.Entity, it.Summary = KindSessionInfo, "title", unquote(s.Title)
	return nil
}

func decodeConfig(g asr.Generic, it *Item) error {
	c, err := into[asr.ConfigChange](g)
	if err != nil {
		return err
	}
	it.Kind = KindConfig
	cfg := &Config{Mode: c.Mode}
	if c.Model != nil {
		cfg.Model = c.Model.ID
	}
	var opts []json.RawMessage
	_ = json.Unmarshal(c.Options, &opts)
	cfg.Options = len(opts)
	it.Config = cfg
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
	return nil
}

func decodeDeclaration(g asr.Generic, it *Item) error {
	d, err := into[asr.Declaration](g)
	if err != nil {
		return err
	}
	it.Kind, it.Lossy, it.Through = KindDeclaration, d.Lossy, d.LocalThroughID
	return nil
}

// decodePromptError reads the JSON-RPC error a refused prompt got, which
// the audit record keeps in native.record.
func decodePromptError(g asr.Generic, it *Item) error {
	if err := decodeOther(g, it); err != nil {
		return err
	}
	var a struct {
		Error Failure `json:"error"`
	}
	if g.Native != nil {
		_ = json.Unmarshal(g.Native.Record, &a)
	}
	it.Failure = &a.Error
	return nil
}

func decodeOther(g asr.Generic, it *Item) error {
	it.Kind = KindOther
	if asr.IsAudit(g.Type) {
		it.Kind = KindAudit
	}
	it.Audit = strings.TrimPrefix(g.Type, asr.AuditPrefix)
	it.Summary = g.Type
	return nil
}

// DisplayPath renders a PathRef: relative to root0 as is (root0 itself as
// "."), another root as root1:path, no root as the absolute path; "" for
// none.
func DisplayPath(r *asr.PathRef) string {
	switch {
	case r == nil:
		return ""
	case r.Root == nil:
		return r.Path
	case *r.Root == "root0" && r.Path == "":
		return "."
	case *r.Root == "root0":
		return r.Path
	}
	return *r.Root + ":" + r.Path
}

// decodeBlob decodes a terminal's output: the text, or how many bytes of
// binary output it holds, or that it is not base64.
func decodeBlob(b asr.Blob) (text string, binary int, notBase64 bool) {
	data, err := base64.StdEncoding.DecodeString(b.Data)
	switch {
	case err != nil:
		return "", 0, true
	case !utf8.Valid(data):
		return "", len(data), false
	}
	return string(data), 0, false
}

// backgroundWork names the background work a state record keeps in
// native.record (the ACP v2 draft 2.0.0-alpha.13's state_update
// background): "terminal t1, tool_call c1", "none" for [], "" when the
// record has none.
func backgroundWork(n *asr.Native) string {
	if n == nil || len(n.Record) == 0 {
		return ""
	}
	var u struct {
		Background *[]map[string]any `json:"background"`
	}
	if json.Unmarshal(n.Record, &u) != nil || u.Background == nil {
		return ""
	}
	if len(*u.Background) == 0 {
		return "none"
	}
	var parts []string
	for _, w := range *u.Background {
		kind, _ := w["type"].(string)
		id := ""
		for _, k := range []string{"terminalId", "toolCallId", "sessionId"} {
			if v, ok := w[k].(string); ok {
				id = v
				break
			}
		}
		parts = append(parts, strings.TrimSpace(kind+" "+id))
	}
	return strings.Join(parts, ", ")
}

func unquote(r json.RawMessage) string {
	var s string
	if json.Unmarshal(r, &s) == nil {
		return s
	}
	if t := strings.TrimSpace(string(r)); t != "null" {
		return t
	}
	return ""
}

func num(r json.RawMessage) float64 {
	f, _ := strconv.ParseFloat(strings.TrimSpace(string(r)), 64)
	return f
}

// RecordTypes lists the record types the transcript decodes by a decoder
// of their own (any other is a vendor or audit record), sorted.
func RecordTypes() []string {
	out := make([]string, 0, len(recordTypes))
	for t := range recordTypes {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}
