package cli

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/acptap/acptap/host/filekind"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/acptap/acptap/sdk/acpasr"
	"github.com/acptap/acptap/sdk/asr"
)

// Limits of show's output per record (messages are shown whole).
const (
	showMaxLines = 20  // lines of tool output, terminal output, summaries
	showMaxJSON  = 160 // characters of tool input and raw output
)

func runShow(env *Env, args []string) int {
	var c common
	fs := newFlagSet(env, "show", "[flags] STREAM",
		"Prints an ASR stream (or a wire log: its frames) as a readable transcript: who said what (reasoning dimmed), tool calls\n"+
			"and their results, permissions and their decisions, questions, file changes, plans,\n"+
			"terminals, usage and state changes, with the declared losses at the top. Records appear in\n"+
			"stream order; a revision says which record it revises. Colour when stdout is a terminal\n"+
			"(not when NO_COLOR is set). A STREAM is a file, - for stdin, or a session ID in the store.\n"+
			"Exits 1 if the stream cannot be read or has lines that are not records.")
	registerStoreFlags(fs, &c)
	noColor := fs.Bool("no-color", false, "never colour the output")
	color := fs.Bool("color", false, "colour the output even when stdout is not a terminal")
	maxLine := registerMaxLine(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(env.Stderr, "acptap show: give exactly one stream")
		return ExitUsage
	}
	on := (*color || isTerminal(env.Stdout)) && !*noColor && os.Getenv("NO_COLOR") == ""
	if k, err := filekind.SniffFile(fs.Arg(0)); err == nil && k == filekind.Wire {
		return showWire(env, fs.Arg(0), painter{on: on})
	}
	name, r, err := openStream(env, &c, fs.Arg(0))
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap show: %s\n", oneLine(err))
		return ExitFailure
	}
	defer r.Close()
	// Declarations can come anywhere: read a file once for them, so the
	// losses are complete at the top.
	var decls map[string]string
	if f, ok := r.(*os.File); ok && regularFile(f) {
		decls = declaredLosses(f, *maxLine)
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			fmt.Fprintf(env.Stderr, "acptap show: %s\n", oneLine(err))
			return ExitFailure
		}
	}
	safe, token := newTermSafe(env.Stdout, on)
	out := bufio.NewWriter(safe)
	sh := &shower{w: out, p: painter{on: on, token: token}, decls: decls, maxLine: *maxLine}
	bad, err := sh.stream(r)
	if ferr := errors.Join(out.Flush(), safe.Flush()); err == nil {
		err = ferr
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap show: %s: %s\n", name, oneLine(err))
		return ExitFailure
	}
	if bad > 0 {
		fmt.Fprintf(env.Stderr, "acptap show: %s: %d %s could not be shown; `acptap validate %s` says why\n", name, bad, plural(bad, "line"), name)
		return ExitFailure
	}
	return ExitOK
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// declaredLosses reads the loss categories declarations add, each with the
// id of the declaration that added it first.
func declaredLosses(r io.Reader, maxLine int) map[string]string {
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

// painter colours text with ANSI SGR codes when on, written as token +
// code + "m" for the termSafe writer to turn into ESC "[" code "m".
type painter struct {
	on    bool
	token string
}

const (
	sgrBold    = "1"
	sgrDim     = "2"
	sgrRed     = "31"
	sgrGreen   = "32"
	sgrYellow  = "33"
	sgrBlue    = "34"
	sgrMagenta = "35"
	sgrCyan    = "36"
)

func (p painter) c(code, s string) string {
	if !p.on || s == "" {
		return s
	}
	return p.token + code + "m" + s + p.token + "0m"
}

// shower writes the transcript.
type shower struct {
	w     *bufio.Writer
	p     painter
	decls map[string]string // category → id of the declaration that added it
	// maxLine bounds a line read (0: asr.DefaultMaxLine).
	maxLine int
}

// stream writes the header block and one entry per record; it returns how
// many lines could not be shown.
func (s *shower) stream(r io.Reader) (int, error) {
	rd := asr.NewReader(r)
	rd.MaxLine = s.maxLine
	bad := 0
	for {
		line, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return bad, err
		}
		n := rd.Line()
		if n == 1 {
			if h, err := asr.ReadHeader(line); err == nil {
				s.header(h)
				continue
			}
			fmt.Fprintln(s.w, s.p.c(sgrRed, "(line 1 is not a header)"))
		}
		g, err := asr.ReadRecord(line)
		if err != nil {
			bad++
			fmt.Fprintln(s.w, s.p.c(sgrRed, fmt.Sprintf("line %d: not a record: %s", n, oneLine(err))))
			continue
		}
		if err := s.record(g); err != nil {
			bad++
			fmt.Fprintln(s.w, s.p.c(sgrRed, fmt.Sprintf("line %d: %s record: %s", n, g.Type, oneLine(err))))
		}
	}
	if t := rd.Tail(); len(t) > 0 {
		fmt.Fprintln(s.w, s.p.c(sgrDim, fmt.Sprintf("(an uncommitted tail of %d bytes follows the last record)", len(t))))
	}
	return bad, nil
}

func (s *shower) header(h asr.Header) {
	p := s.p
	fmt.Fprintf(s.w, "%s %s\n", p.c(sgrBold, "Session"), p.c(sgrBold, h.SessionID))
	field := func(k, v string) {
		if v != "" {
			fmt.Fprintf(s.w, "  %-10s %s\n", k, v)
		}
	}
	if h.Agent != nil {
		field("agent", strings.TrimSpace(h.Agent.Name+" "+h.Agent.Version))
	}
	prod := strings.TrimSpace(h.Producer.Name + " " + h.Producer.Version)
	if h.Producer.Plugin != nil {
		prod += " · plugin " + h.Producer.Plugin.Name + " " + h.Producer.Plugin.Version
	}
	how := h.Producer.Method
	if h.Producer.Source != nil {
		how += " from " + h.Producer.Source.Format + " " + h.Producer.Source.FormatVersion
	}
	field("producer", prod+" · "+how)
	field("created", h.CreatedAt)
	if h.Workspace != nil {
		var roots []string
		for _, r := range h.Workspace.Roots {
			path := "(redacted)"
			if r.Path != nil {
				path = *r.Path
			}
			roots = append(roots, r.ID+" "+path)
		}
		field("workspace", strings.Join(roots, " · "))
	}
	if l := h.Lineage; l != nil {
		var parts []string
		if l.ForkedFrom != nil {
			parts = append(parts, "forked from "+l.ForkedFrom.Session)
		}
		if l.Inherits != nil {
			parts = append(parts, l.Inherits.Mode+" history of "+l.Inherits.From)
		}
		if l.SpawnedBy != nil {
			parts = append(parts, "subagent of "+l.SpawnedBy.Session)
		}
		field("lineage", strings.Join(parts, " · "))
	}
	losses := strings.Join(h.Producer.Lossy, ", ")
	if losses == "" {
		losses = "none in the header"
	}
	field("losses", p.c(sgrYellow, losses))
	if len(s.decls) > 0 {
		in := map[string]bool{}
		for _, c := range h.Producer.Lossy {
			in[c] = true
		}
		var later []string
		for _, c := range asr.SortedKeys(keysOf(s.decls)) {
			if !in[c] {
				later = append(later, c+" ("+s.decls[c]+")")
			}
		}
		if len(later) > 0 {
			fmt.Fprintf(s.w, "  %-10s %s\n", "", p.c(sgrYellow, "declared later: "+strings.Join(later, ", ")))
		}
	}
	fmt.Fprintln(s.w)
}

func keysOf(m map[string]string) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// entry starts a record's entry: its id and time, dimmed, then the text;
// more lines are indented under the text.
func (s *shower) entry(g asr.Generic, text string, more ...string) {
	at := g.TS
	if at == "" {
		at = g.ObservedAt
	}
	if len(at) >= 19 {
		at = at[11:19]
	} else {
		at = ""
	}
	prefix := fmt.Sprintf("%-5s %-8s ", g.ID, at)
	if g.Supersedes != "" {
		text += s.p.c(sgrDim, " (revises "+g.Supersedes+")")
	}
	fmt.Fprintln(s.w, s.p.c(sgrDim, prefix)+text)
	pad := strings.Repeat(" ", len(prefix)+2)
	for _, m := range more {
		for _, l := range strings.Split(strings.TrimRight(m, "\n"), "\n") {
			if strings.TrimSpace(l) == "" {
				fmt.Fprintln(s.w)
				continue
			}
			fmt.Fprintln(s.w, pad+l)
		}
	}
}

// record writes one record's entry.
func (s *shower) record(g asr.Generic) error {
	p := s.p
	switch g.Type {
	case asr.TypeMessage:
		var m asr.Message
		if err := json.Unmarshal(g.Line, &m); err != nil {
			return err
		}
		s.message(g, m)
	case asr.TypeToolCall:
		var c asr.ToolCall
		if err := json.Unmarshal(g.Line, &c); err != nil {
			return err
		}
		head := p.c(sgrYellow, "tool call") + " " + c.CallID + ":"
		if c.Name != "" {
			head += " " + p.c(sgrBold, c.Name)
		}
		if c.Title != "" {
			head += " " + strconv.Quote(c.Title)
		}
		if c.Kind != "" {
			head += " [" + c.Kind + "]"
		}
		var more []string
		for _, l := range c.Locations {
			loc := s.path(&l.Path)
			if len(l.Line) > 0 && string(l.Line) != "null" {
				loc += ":" + string(l.Line)
			}
			more = append(more, "at "+loc)
		}
		if len(c.Input) > 0 {
			more = append(more, p.c(sgrDim, "input: "+clip(string(c.Input), showMaxJSON)))
		}
		s.entry(g, head, more...)
	case asr.TypeToolResult:
		var r asr.ToolResult
		if err := json.Unmarshal(g.Line, &r); err != nil {
			return err
		}
		head := p.c(sgrYellow, "tool result") + " " + r.CallID + ": " + s.status(r.Status)
		if r.Exec != nil {
			head += " (terminal " + r.Exec.TerminalID + ")"
		}
		var more []string
		if t := s.blocks(r.DisplayContent); t != "" {
			more = append(more, clipLines(t, showMaxLines))
		}
		if len(r.Raw) > 0 {
			more = append(more, p.c(sgrDim, "raw: "+clip(string(r.Raw), showMaxJSON)))
		}
		s.entry(g, head, more...)
	case asr.TypeFileChange:
		var fc asr.FileChange
		if err := json.Unmarshal(g.Line, &fc); err != nil {
			return err
		}
		head := p.c(sgrBlue, "file change") + " " + s.status(g.Status)
		if fc.Cause != nil {
			head += " by " + fc.Cause.CallID
		}
		var more []string
		for _, c := range fc.Changes {
			ch := c.Op + " " + s.path(c.Path)
			if c.OldPath != nil {
				ch = c.Op + " " + s.path(c.OldPath) + " → " + s.path(c.Path)
			}
			more = append(more, ch)
		}
		s.entry(g, head, more...)
	case asr.TypePermission:
		var pm asr.Permission
		if err := json.Unmarshal(g.Line, &pm); err != nil {
			return err
		}
		s.permission(g, pm)
	case asr.TypeInputRequest:
		var q asr.InputRequest
		if err := json.Unmarshal(g.Line, &q); err != nil {
			return err
		}
		head := p.c(sgrMagenta, "question") + " " + q.RequestID
		if q.Mode != "" {
			head += " (" + q.Mode + ")"
		}
		head += ": " + q.Message
		var more []string
		if q.URL != "" {
			more = append(more, "url: "+q.URL)
		}
		ans := s.status(g.Status)
		if len(q.Response) > 0 {
			ans += " " + clip(string(q.Response), showMaxJSON)
		}
		more = append(more, "→ "+ans)
		s.entry(g, head, more...)
	case asr.TypePlan:
		var pl asr.Plan
		if err := json.Unmarshal(g.Line, &pl); err != nil {
			return err
		}
		var entries []struct {
			Content  string `json:"content"`
			Priority string `json:"priority"`
			Status   string `json:"status"`
		}
		_ = json.Unmarshal(pl.Entries, &entries)
		var more []string
		for _, e := range entries {
			mark := map[string]string{"completed": "[x]", "in_progress": "[>]", "pending": "[ ]", "cancelled": "[-]"}[e.Status]
			if mark == "" {
				mark = "[" + e.Status + "]"
			}
			item := mark + " " + e.Content
			if e.Priority != "" {
				item += p.c(sgrDim, " ("+e.Priority+")")
			}
			more = append(more, item)
		}
		s.entry(g, p.c(sgrCyan, "plan")+" "+pl.PlanID+":", more...)
	case asr.TypeTerminal:
		var t asr.Terminal
		if err := json.Unmarshal(g.Line, &t); err != nil {
			return err
		}
		head := p.c(sgrBlue, "terminal") + " " + t.TerminalID + ":"
		if t.Command != "" {
			head += " " + p.c(sgrBold, t.Command)
		}
		if t.Cwd != nil {
			head += " in " + s.path(t.Cwd)
		}
		head += " — " + g.Status
		if len(t.ExitCode) > 0 && string(t.ExitCode) != "null" {
			head += " " + string(t.ExitCode)
		}
		if len(t.Signal) > 0 && string(t.Signal) != "null" {
			head += " " + strings.Trim(string(t.Signal), `"`)
		}
		var more []string
		if t.Output != nil {
			more = append(more, terminalOutput(t.Output.Blob))
		}
		s.entry(g, head, more...)
	case asr.TypeState:
		var st asr.State
		if err := json.Unmarshal(g.Line, &st); err != nil {
			return err
		}
		text := "● " + st.State
		if r := strings.Trim(string(st.StopReason), `"`); r != "" && r != "null" {
			text += " (" + r + ")"
		}
		text = p.c(sgrDim, text)
		if len(st.Error) > 0 && string(st.Error) != "null" {
			text += " " + p.c(sgrRed, "error: "+clip(string(st.Error), showMaxJSON))
		}
		if bg := backgroundWork(st.Native); bg != "" {
			text += " " + p.c(sgrDim, "background: "+bg)
		}
		s.entry(g, text)
	case asr.TypeCompaction:
		var c asr.Compaction
		if err := json.Unmarshal(g.Line, &c); err != nil {
			return err
		}
		head := p.c(sgrCyan, "compaction") + " " + c.CompactionID + " (" + c.Kind + ") " + s.status(g.Status)
		if c.Replaces != nil {
			head += ", replaces through " + c.Replaces.ThroughID
		}
		var more []string
		if t := s.blocks(c.Summary); t != "" {
			more = append(more, clipLines(t, showMaxLines))
		}
		if len(c.Error) > 0 && string(c.Error) != "null" {
			more = append(more, p.c(sgrRed, "error: "+clip(string(c.Error), showMaxJSON)))
		}
		s.entry(g, head, more...)
	case asr.TypeUsageSummary:
		var u asr.UsageSummary
		if err := json.Unmarshal(g.Line, &u); err != nil {
			return err
		}
		var parts []string
		if cw := u.ContextWindow; cw != nil {
			used, _ := strconv.ParseFloat(string(cw.Used), 64)
			size, _ := strconv.ParseFloat(string(cw.Size), 64)
			part := "context " + string(cw.Used) + " / " + string(cw.Size)
			if size > 0 {
				part += fmt.Sprintf(" (%.1f%%)", 100*used/size)
			}
			parts = append(parts, part)
		}
		if u.Cost != nil {
			parts = append(parts, "cost "+string(u.Cost.Amount)+" "+u.Cost.Currency)
		}
		s.entry(g, p.c(sgrDim, "usage ("+u.Scope+"): "+strings.Join(parts, " · ")))
	case asr.TypeSessionInfo:
		var si asr.SessionInfo
		if err := json.Unmarshal(g.Line, &si); err != nil {
			return err
		}
		title := "(cleared)"
		_ = json.Unmarshal(si.Title, &title)
		s.entry(g, "title: "+p.c(sgrBold, title))
	case asr.TypeConfigChange:
		var cc asr.ConfigChange
		if err := json.Unmarshal(g.Line, &cc); err != nil {
			return err
		}
		var parts []string
		if cc.Model != nil {
			parts = append(parts, "model "+cc.Model.ID)
		}
		if cc.Mode != "" {
			parts = append(parts, "mode "+cc.Mode)
		}
		var opts []json.RawMessage
		_ = json.Unmarshal(cc.Options, &opts)
		parts = append(parts, fmt.Sprintf("%d %s", len(opts), plural(len(opts), "option")))
		s.entry(g, p.c(sgrDim, "config: "+strings.Join(parts, " · ")))
	case asr.TypeSubagent:
		var sa asr.Subagent
		if err := json.Unmarshal(g.Line, &sa); err != nil {
			return err
		}
		text := p.c(sgrCyan, "subagent") + " session " + sa.ChildSession
		if sa.CallID != "" {
			text += " (tool call " + sa.CallID + ")"
		}
		s.entry(g, text)
	case asr.TypeDeclaration:
		var d asr.Declaration
		if err := json.Unmarshal(g.Line, &d); err != nil {
			return err
		}
		var parts []string
		if len(d.Lossy) > 0 {
			parts = append(parts, "loss "+strings.Join(d.Lossy, ", "))
		}
		if d.LocalThroughID != "" {
			parts = append(parts, "copied history through "+d.LocalThroughID)
		}
		s.entry(g, p.c(sgrYellow, "declared: "+strings.Join(parts, "; ")))
	case asr.AuditPrefix + acpasr.AuditPromptError:
		var a struct {
			Native struct {
				Record struct {
					Error struct {
						Code    int    `json:"code"`
						Message string `json:"message"`
					} `json:"error"`
				} `json:"record"`
			} `json:"native"`
		}
		_ = json.Unmarshal(g.Line, &a)
		e := a.Native.Record.Error
		s.entry(g, p.c(sgrRed, fmt.Sprintf("✗ prompt refused by the agent: error %d %s", e.Code, clip(e.Message, showMaxJSON))))
	default:
		what := "vendor record"
		if asr.IsAudit(g.Type) {
			what = "audit-only"
		}
		s.entry(g, p.c(sgrDim, g.Type+" ("+what+")"))
	}
	return nil
}

func (s *shower) message(g asr.Generic, m asr.Message) {
	p := s.p
	var who string
	switch {
	case m.Origin == "notice":
		who = p.c(sgrMagenta, "notice")
		if m.Severity != "" {
			who += " (" + m.Severity + ")"
		}
	case m.Origin == "inter_session" && m.From != nil:
		who = p.c(sgrBold+";"+sgrCyan, m.Role) + " from session " + m.From.Session
	case m.Role == "user":
		who = p.c(sgrBold+";"+sgrCyan, "user")
	case m.Role == "assistant":
		who = p.c(sgrBold+";"+sgrGreen, "assistant")
	default:
		who = p.c(sgrBold, m.Role)
	}
	if m.Author != "" {
		who += p.c(sgrDim, " ("+m.Author+")")
	}
	var parts []string
	for _, raw := range m.Content {
		b := decodeBlock(raw)
		switch b.Type {
		case "reasoning":
			t := b.Text
			if t == "" {
				t = strings.Join(b.Summary, "\n\n")
			}
			parts = append(parts, p.c(sgrDim, "thinking: "+t))
		case "refusal":
			parts = append(parts, p.c(sgrRed, "refusal: ")+b.Text)
		default:
			parts = append(parts, b.render())
		}
	}
	if len(parts) == 0 {
		s.entry(g, who+": "+p.c(sgrDim, "(no content)"))
		return
	}
	lines := strings.Split(strings.Join(parts, "\n"), "\n")
	s.entry(g, who+": "+lines[0], lines[1:]...)
}

func (s *shower) permission(g asr.Generic, pm asr.Permission) {
	p := s.p
	head := p.c(sgrMagenta, "permission") + " " + pm.RequestID + " " + g.Status + ": "
	var subj struct {
		CallID  string `json:"callId"`
		Command string `json:"command"`
	}
	_ = json.Unmarshal(pm.Subject, &subj)
	var more []string
	if g.Status == "resolved" {
		d := pm.Decision
		if d == "" {
			d = "(no decision recorded)"
		}
		col := sgrGreen
		if strings.HasPrefix(d, "reject") || d == "cancelled" {
			col = sgrRed
		}
		head += p.c(col, d)
		if pm.SelectedOptionID != "" {
			head += " (option " + pm.SelectedOptionID + ")"
		}
		head += " — " + pm.Title
	} else {
		head += pm.Title
		var opts []struct{ OptionID, Name, Kind string }
		_ = json.Unmarshal(pm.Options, &opts)
		var labels []string
		for _, o := range opts {
			labels = append(labels, o.Name+" ["+o.Kind+"]")
		}
		if pm.Description != "" {
			more = append(more, pm.Description)
		}
		if len(labels) > 0 {
			more = append(more, "options: "+strings.Join(labels, ", "))
		}
	}
	switch {
	case subj.CallID != "":
		more = append([]string{"for tool call " + subj.CallID}, more...)
	case subj.Command != "":
		more = append([]string{"for command " + subj.Command}, more...)
	}
	s.entry(g, head, more...)
}

// status colours a status value.
func (s *shower) status(st string) string {
	switch st {
	case "completed", "applied", "answered", "resolved":
		return s.p.c(sgrGreen, st)
	case "failed", "denied", "declined":
		return s.p.c(sgrRed, st)
	case "":
		return s.p.c(sgrDim, "(no status)")
	}
	return s.p.c(sgrYellow, st)
}

// path renders a PathRef: relative to root0 as is, another root as
// root1:path, no root as the absolute path.
func (s *shower) path(r *asr.PathRef) string {
	switch {
	case r == nil:
		return "(no path)"
	case r.Root == nil:
		return r.Path
	case *r.Root == "root0" && r.Path == "":
		return "."
	case *r.Root == "root0":
		return r.Path
	}
	return *r.Root + ":" + r.Path
}

// blocks renders content blocks as text.
func (s *shower) blocks(raws []json.RawMessage) string {
	var parts []string
	for _, raw := range raws {
		parts = append(parts, decodeBlock(raw).render())
	}
	return strings.Join(parts, "\n")
}

type block struct {
	Type     string   `json:"type"`
	Text     string   `json:"text"`
	Summary  []string `json:"summary"`
	MimeType string   `json:"mimeType"`
	URI      string   `json:"uri"`
	Name     string   `json:"name"`
	Resource struct {
		URI string `json:"uri"`
	} `json:"resource"`
}

func decodeBlock(raw json.RawMessage) block {
	var b block
	if json.Unmarshal(raw, &b) != nil {
		b.Type = "(invalid block)"
	}
	return b
}

func (b block) render() string {
	switch b.Type {
	case "text":
		return b.Text
	case "image", "audio":
		return "[" + b.Type + " " + b.MimeType + "]"
	case "resource_link":
		return "[link " + b.Name + " " + b.URI + "]"
	case "resource":
		return "[resource " + b.Resource.URI + "]"
	}
	return "[" + b.Type + "]"
}

// terminalOutput decodes a terminal's output blob for display.
func terminalOutput(b asr.Blob) string {
	data, err := base64.StdEncoding.DecodeString(b.Data)
	switch {
	case err != nil:
		return "(output not base64)"
	case !utf8.Valid(data):
		return fmt.Sprintf("(%d bytes of binary output)", len(data))
	}
	return clipLines(strings.TrimRight(string(data), "\n"), showMaxLines)
}

// clip shortens s to n characters.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// clipLines keeps the first n lines of s.
func clipLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n… %d more lines", len(lines)-n)
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
