package transcript

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/acptap/acptap/sdk/asr"
)

// Record is one record as the transcript reads it: its envelope and the
// item it makes on its own (Item.Records empty). Build folds records into
// the view's items; `acptap show` renders each record as it comes.
type Record struct {
	Line       int    // the line of the stream it is on
	Type       string // the record type
	TS         string // ts, or observedAt when there is none
	Supersedes string
	Native     *asr.Native
	Item       Item
}

// Problem is a line the transcript could not read as a record.
type Problem struct {
	Line int
	// NotHeader: line 1 is not a header (it is then read as a record).
	NotHeader bool
	// Type is set when the envelope was read and the body was not.
	Type string
	Err  error
}

func (p Problem) String() string {
	switch {
	case p.NotHeader:
		return "line 1: not a header"
	case p.Type != "":
		return fmt.Sprintf("line %d: %s record: %s", p.Line, p.Type, oneLine(p.Err))
	}
	return fmt.Sprintf("line %d: %s", p.Line, oneLine(p.Err))
}

// Entry is what Reader.Next returns: exactly one of Header, Record and
// Problem is set. JSON is the line as read (valid until the next call).
type Entry struct {
	Header  *asr.Header
	Record  *Record
	Problem *Problem
	JSON    []byte
}

// Reader reads a stream line by line, decoding each record once by the
// decoder its type has in recordTypes.
type Reader struct {
	rd   *asr.Reader
	from uint64
	// a line 1 that is not a header is reported, then read as a record
	again []byte
}

// NewReader reads r; records before seq from are skipped undecoded;
// maxLine bounds a line (0: asr.DefaultMaxLine).
func NewReader(r io.Reader, from uint64, maxLine int) *Reader {
	rd := asr.NewReader(r)
	rd.MaxLine = maxLine
	return &Reader{rd: rd, from: from}
}

// Tail is the size of an uncommitted last line, once Next returned io.EOF.
func (r *Reader) Tail() int { return len(r.rd.Tail()) }

// Next returns the next entry, or io.EOF at the end of the stream; another
// error is a read error (the stream cannot be read on).
func (r *Reader) Next() (Entry, error) {
	for {
		line := r.again
		r.again = nil
		if line == nil {
			var err error
			if line, err = r.rd.Next(); err != nil {
				return Entry{}, err
			}
			if r.rd.Line() == 1 {
				if h, err := asr.ReadHeader(line); err == nil {
					return Entry{Header: &h, JSON: line}, nil
				}
				r.again = line
				return Entry{Problem: &Problem{Line: 1, NotHeader: true}, JSON: line}, nil
			}
		}
		n := r.rd.Line()
		g, err := asr.ReadRecord(line)
		if err != nil {
			return Entry{Problem: &Problem{Line: n, Err: err}, JSON: line}, nil
		}
		if g.Seq < r.from {
			continue
		}
		rec, err := decode(g, n)
		if err != nil {
			return Entry{Problem: &Problem{Line: n, Type: g.Type, Err: err}, JSON: line}, nil
		}
		return Entry{Record: rec, JSON: line}, nil
	}
}

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

// DeclaredLosses reads the loss categories declarations add, each with the
// id of the declaration that added it first (a first pass, so a reader
// can list every loss before the records).
func DeclaredLosses(r io.Reader, maxLine int) map[string]string {
	out := map[string]string{}
	rd := asr.NewReader(r)
	rd.MaxLine = maxLine
	for {
		line, err := rd.Next()
		if err != nil {
			return out
		}
		if !strings.Contains(string(line), `"declaration"`) {
			continue
		}
		var d asr.Declaration
		if json.Unmarshal(line, &d) != nil || d.Type != asr.TypeDeclaration {
			continue
		}
		for _, c := range d.Lossy {
			if _, ok := out[c]; !ok {
				out[c] = d.ID
			}
		}
	}
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

var errStop = errors.New("stop")

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
