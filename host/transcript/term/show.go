package term

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/acptap/acptap/host/transcript"
	"github.com/acptap/acptap/sdk/asr"
)

// Limits of the output per record (messages are shown whole).
const (
	MaxLines = 20  // lines of tool output, terminal output, summaries
	MaxJSON  = 160 // characters of tool input and raw output
)

// Options say how to render.
type Options struct {
	// Color writes ANSI colours (the only escapes that reach the terminal).
	Color bool
	// Declared are the loss categories the stream's declarations add, with
	// the declaration that added each first (transcript.DeclaredLosses);
	// the header lists those it does not. Nil: Show finds them itself when
	// the stream is a regular file (it reads it twice); a stream read once
	// (a pipe) shows its declarations where they are.
	Declared map[string]string
	// MaxLine bounds a line read (0: asr.DefaultMaxLine).
	MaxLine int
}

// Show writes the stream r as a transcript to w: the header block, then
// one entry per record in stream order, each rendered by its type's
// renderer; a line that is not a record is named where it is. It returns
// how many lines could not be shown; an error is a read or write error.
func Show(w io.Writer, r io.Reader, o Options) (bad int, err error) {
	if f, ok := r.(*os.File); ok && o.Declared == nil {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			o.Declared = transcript.DeclaredLosses(f, o.MaxLine)
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return 0, err
			}
		}
	}
	safe, token := newTermSafe(w, o.Color)
	out := bufio.NewWriter(safe)
	p := &printer{w: out, paint: paint{on: o.Color, token: token}, decls: o.Declared}
	bad, err = p.stream(transcript.NewReader(r, 0, o.MaxLine))
	if ferr := errors.Join(out.Flush(), safe.Flush()); err == nil {
		err = ferr
	}
	return bad, err
}

// printer writes entries.
type printer struct {
	w *bufio.Writer
	paint
	decls map[string]string
}

func (p *printer) stream(rd *transcript.Reader) (int, error) {
	bad := 0
	for {
		e, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return bad, err
		}
		switch {
		case e.Header != nil:
			p.header(*e.Header)
		case e.Problem != nil && e.Problem.NotHeader:
			fmt.Fprintln(p.w, p.c(sgrRed, "(line 1 is not a header)"))
		case e.Problem != nil && e.Problem.Type != "":
			bad++
			fmt.Fprintln(p.w, p.c(sgrRed, fmt.Sprintf("line %d: %s record: %s", e.Problem.Line, e.Problem.Type, oneLine(e.Problem.Err))))
		case e.Problem != nil:
			bad++
			fmt.Fprintln(p.w, p.c(sgrRed, fmt.Sprintf("line %d: not a record: %s", e.Problem.Line, oneLine(e.Problem.Err))))
		default:
			f, ok := renderers[e.Record.Type]
			if !ok {
				f = renderOther
			}
			f(p, e.Record)
		}
	}
	if t := rd.Tail(); t > 0 {
		fmt.Fprintln(p.w, p.c(sgrDim, fmt.Sprintf("(an uncommitted tail of %d bytes follows the last record)", t)))
	}
	return bad, nil
}

func (p *printer) header(h asr.Header) {
	fmt.Fprintf(p.w, "%s %s\n", p.c(sgrBold, "Session"), p.c(sgrBold, h.SessionID))
	field := func(k, v string) {
		if v != "" {
			fmt.Fprintf(p.w, "  %-10s %s\n", k, v)
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
	in := map[string]bool{}
	for _, c := range h.Producer.Lossy {
		in[c] = true
	}
	var later []string
	for _, c := range sortedKeys(p.decls) {
		if !in[c] {
			later = append(later, c+" ("+p.decls[c]+")")
		}
	}
	if len(later) > 0 {
		fmt.Fprintf(p.w, "  %-10s %s\n", "", p.c(sgrYellow, "declared later: "+strings.Join(later, ", ")))
	}
	fmt.Fprintln(p.w)
}

// entry starts a record's entry: its id and time, dimmed, then the text;
// more lines are indented under the text.
func (p *printer) entry(r *transcript.Record, text string, more ...string) {
	at := r.TS
	if len(at) >= 19 {
		at = at[11:19]
	} else {
		at = ""
	}
	prefix := fmt.Sprintf("%-5s %-8s ", r.Item.ID, at)
	if r.Supersedes != "" {
		text += p.c(sgrDim, " (revises "+r.Supersedes+")")
	}
	fmt.Fprintln(p.w, p.c(sgrDim, prefix)+text)
	pad := strings.Repeat(" ", len(prefix)+2)
	for _, m := range more {
		for _, l := range strings.Split(strings.TrimRight(m, "\n"), "\n") {
			if strings.TrimSpace(l) == "" {
				fmt.Fprintln(p.w)
				continue
			}
			fmt.Fprintln(p.w, pad+l)
		}
	}
}

// status colours a status value.
func (p *printer) status(st string) string {
	switch st {
	case "completed", "applied", "answered", "resolved":
		return p.c(sgrGreen, st)
	case "failed", "denied", "declined":
		return p.c(sgrRed, st)
	case "":
		return p.c(sgrDim, "(no status)")
	}
	return p.c(sgrYellow, st)
}

// paint colours text with ANSI SGR codes when on, written as token + code
// + "m" for the termSafe writer to turn into ESC "[" code "m".
type paint struct {
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

func (p paint) c(code, s string) string {
	if !p.on || s == "" {
		return s
	}
	return p.token + code + "m" + s + p.token + "0m"
}

// Clip shortens s to n characters.
func Clip(s string, n int) string {
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

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }
