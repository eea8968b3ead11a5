package term

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/acptap/acptap/host/transcript"
	"github.com/acptap/acptap/sdk/asr"
)

// render writes one record's entry.
type render func(p *printer, r *transcript.Record)

// renderers is the table of record types the terminal knows; another type
// is a vendor or audit record (renderOther).
var renderers map[string]render

func init() {
	renderers = map[string]render{
		asr.TypeMessage:                        renderMessage,
		asr.TypeToolCall:                       renderToolCall,
		asr.TypeToolResult:                     renderToolResult,
		asr.TypeFileChange:                     renderFileChange,
		asr.TypePermission:                     renderPermission,
		asr.TypeInputRequest:                   renderInput,
		asr.TypePlan:                           renderPlan,
		asr.TypeTerminal:                       renderTerminal,
		asr.TypeState:                          renderState,
		asr.TypeCompaction:                     renderCompaction,
		asr.TypeUsageSummary:                   renderUsage,
		asr.TypeSessionInfo:                    renderSessionInfo,
		asr.TypeConfigChange:                   renderConfig,
		asr.TypeSubagent:                       renderSubagent,
		asr.TypeDeclaration:                    renderDeclaration,
		asr.AuditPrefix + asr.AuditPromptError: renderPromptError,
	}
}

func renderMessage(p *printer, r *transcript.Record) {
	it := &r.Item
	var who string
	switch {
	case it.Origin == "notice":
		who = p.c(sgrMagenta, "notice")
		if it.Severity != "" {
			who += " (" + it.Severity + ")"
		}
	case it.Origin == "inter_session" && it.From != "":
		who = p.c(sgrBold+";"+sgrCyan, it.Role) + " from session " + it.From
	case it.Role == "user":
		who = p.c(sgrBold+";"+sgrCyan, "user")
	case it.Role == "assistant":
		who = p.c(sgrBold+";"+sgrGreen, "assistant")
	default:
		who = p.c(sgrBold, it.Role)
	}
	if it.Author != "" {
		who += p.c(sgrDim, " ("+it.Author+")")
	}
	var parts []string
	for _, b := range it.Blocks {
		switch b.Type {
		case "reasoning":
			parts = append(parts, p.c(sgrDim, "thinking: "+b.Text))
		case "refusal":
			parts = append(parts, p.c(sgrRed, "refusal: ")+b.Text)
		default:
			parts = append(parts, block(b))
		}
	}
	if len(parts) == 0 {
		p.entry(r, who+": "+p.c(sgrDim, "(no content)"))
		return
	}
	lines := strings.Split(strings.Join(parts, "\n"), "\n")
	p.entry(r, who+": "+lines[0], lines[1:]...)
}

func renderToolCall(p *printer, r *transcript.Record) {
	t := r.Item.Tool
	head := p.c(sgrYellow, "tool call") + " " + t.CallID + ":"
	if t.Name != "" {
		head += " " + p.c(sgrBold, t.Name)
	}
	if t.Title != "" {
		head += " " + strconv.Quote(t.Title)
	}
	if t.Kind != "" {
		head += " [" + t.Kind + "]"
	}
	var more []string
	for _, l := range t.Paths {
		more = append(more, "at "+l)
	}
	if len(t.Input) > 0 {
		more = append(more, p.c(sgrDim, "input: "+Clip(string(t.Input), MaxJSON)))
	}
	p.entry(r, head, more...)
}

func renderToolResult(p *printer, r *transcript.Record) {
	t := r.Item.Tool
	head := p.c(sgrYellow, "tool result") + " " + t.CallID + ": " + p.status(t.Status)
	if t.Exec != "" {
		head += " (terminal " + t.Exec + ")"
	}
	var more []string
	if s := blocks(t.Result); s != "" {
		more = append(more, clipLines(s, MaxLines))
	}
	if len(t.Raw) > 0 {
		more = append(more, p.c(sgrDim, "raw: "+Clip(string(t.Raw), MaxJSON)))
	}
	p.entry(r, head, more...)
}

func renderFileChange(p *printer, r *transcript.Record) {
	it := &r.Item
	head := p.c(sgrBlue, "file change") + " " + p.status(it.Status)
	if it.Cause != "" {
		head += " by " + it.Cause
	}
	var more []string
	for _, d := range it.Diffs {
		if d.Op == "patch" && d.Path == "" {
			continue // the patch text of several changes: show lists the changes
		}
		ch := d.Op + " " + path(d.Path)
		if d.OldPath != "" {
			ch = d.Op + " " + d.OldPath + " → " + path(d.Path)
		}
		more = append(more, ch)
	}
	p.entry(r, head, more...)
}

func renderPermission(p *printer, r *transcript.Record) {
	pm := r.Item.Permission
	head := p.c(sgrMagenta, "permission") + " " + pm.RequestID + " " + r.Item.Status + ": "
	var more []string
	if r.Item.Status == "resolved" {
		d := pm.Decision
		if d == "" {
			d = "(no decision recorded)"
		}
		col := sgrGreen
		if strings.HasPrefix(d, "reject") || d == "cancelled" {
			col = sgrRed
		}
		head += p.c(col, d)
		if pm.SelectedID != "" {
			head += " (option " + pm.SelectedID + ")"
		}
		head += " — " + pm.Title
	} else {
		head += pm.Title
		var labels []string
		for _, o := range pm.Options {
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
	case pm.CallID != "":
		more = append([]string{"for tool call " + pm.CallID}, more...)
	case pm.Command != "":
		more = append([]string{"for command " + pm.Command}, more...)
	}
	p.entry(r, head, more...)
}

func renderInput(p *printer, r *transcript.Record) {
	q := r.Item.Input
	head := p.c(sgrMagenta, "question") + " " + q.RequestID
	if q.Mode != "" {
		head += " (" + q.Mode + ")"
	}
	head += ": " + q.Message
	var more []string
	if q.URL != "" {
		more = append(more, "url: "+q.URL)
	}
	ans := p.status(r.Item.Status)
	if len(q.Response) > 0 {
		ans += " " + Clip(string(q.Response), MaxJSON)
	}
	more = append(more, "→ "+ans)
	p.entry(r, head, more...)
}

var planMarks = map[string]string{"completed": "[x]", "in_progress": "[>]", "pending": "[ ]", "cancelled": "[-]"}

func renderPlan(p *printer, r *transcript.Record) {
	var more []string
	for _, e := range r.Item.Plan {
		mark := planMarks[e.Status]
		if mark == "" {
			mark = "[" + e.Status + "]"
		}
		item := mark + " " + e.Content
		if e.Priority != "" {
			item += p.c(sgrDim, " ("+e.Priority+")")
		}
		more = append(more, item)
	}
	p.entry(r, p.c(sgrCyan, "plan")+" "+r.Item.Entity+":", more...)
}

func renderTerminal(p *printer, r *transcript.Record) {
	t := r.Item.Terminal
	head := p.c(sgrBlue, "terminal") + " " + t.ID + ":"
	if t.Command != "" {
		head += " " + p.c(sgrBold, t.Command)
	}
	if t.Cwd != "" {
		head += " in " + t.Cwd
	}
	head += " — " + r.Item.Status
	if t.Exit != "" {
		head += " " + t.Exit
	}
	if t.Signal != "" {
		head += " " + t.Signal
	}
	var more []string
	if t.HasOutput {
		switch {
		case t.NotBase64:
			more = append(more, "(output not base64)")
		case t.Binary > 0:
			more = append(more, fmt.Sprintf("(%d bytes of binary output)", t.Binary))
		default:
			more = append(more, clipLines(strings.TrimRight(t.Output, "\n"), MaxLines))
		}
	}
	p.entry(r, head, more...)
}

func renderState(p *printer, r *transcript.Record) {
	st := r.Item.State
	text := "● " + st.State
	if st.StopReason != "" {
		text += " (" + st.StopReason + ")"
	}
	text = p.c(sgrDim, text)
	if len(st.Error) > 0 {
		text += " " + p.c(sgrRed, "error: "+Clip(string(st.Error), MaxJSON))
	}
	if st.Background != "" {
		text += " " + p.c(sgrDim, "background: "+st.Background)
	}
	p.entry(r, text)
}

func renderCompaction(p *printer, r *transcript.Record) {
	it := &r.Item
	head := p.c(sgrCyan, "compaction") + " " + it.Entity + " (" + it.Summary + ") " + p.status(it.Status)
	if it.Through != "" {
		head += ", replaces through " + it.Through
	}
	var more []string
	if s := blocks(it.Blocks); s != "" {
		more = append(more, clipLines(s, MaxLines))
	}
	if len(it.Error) > 0 {
		more = append(more, p.c(sgrRed, "error: "+Clip(string(it.Error), MaxJSON)))
	}
	p.entry(r, head, more...)
}

func renderUsage(p *printer, r *transcript.Record) {
	u := r.Item.Usage
	var parts []string
	if u.Window {
		part := "context " + number(u.Used) + " / " + number(u.Size)
		if u.Size > 0 {
			part += fmt.Sprintf(" (%.1f%%)", 100*u.Used/u.Size)
		}
		parts = append(parts, part)
	}
	if u.Priced {
		parts = append(parts, "cost "+number(u.Cost)+" "+u.Currency)
	}
	p.entry(r, p.c(sgrDim, "usage ("+u.Scope+"): "+strings.Join(parts, " · ")))
}

func renderSessionInfo(p *printer, r *transcript.Record) {
	title := r.Item.Summary
	if title == "" {
		title = "(cleared)"
	}
	p.entry(r, "title: "+p.c(sgrBold, title))
}

func renderConfig(p *printer, r *transcript.Record) {
	c := r.Item.Config
	var parts []string
	if c.Model != "" {
		parts = append(parts, "model "+c.Model)
	}
	if c.Mode != "" {
		parts = append(parts, "mode "+c.Mode)
	}
	parts = append(parts, fmt.Sprintf("%d %s", c.Options, plural(c.Options, "option")))
	p.entry(r, p.c(sgrDim, "config: "+strings.Join(parts, " · ")))
}

func renderSubagent(p *printer, r *transcript.Record) {
	text := p.c(sgrCyan, "subagent") + " session " + r.Item.Child
	if r.Item.Cause != "" {
		text += " (tool call " + r.Item.Cause + ")"
	}
	p.entry(r, text)
}

func renderDeclaration(p *printer, r *transcript.Record) {
	var parts []string
	if len(r.Item.Lossy) > 0 {
		parts = append(parts, "loss "+strings.Join(r.Item.Lossy, ", "))
	}
	if r.Item.Through != "" {
		parts = append(parts, "copied history through "+r.Item.Through)
	}
	p.entry(r, p.c(sgrYellow, "declared: "+strings.Join(parts, "; ")))
}

func renderPromptError(p *printer, r *transcript.Record) {
	e := r.Item.Failure
	p.entry(r, p.c(sgrRed, fmt.Sprintf("✗ prompt refused by the agent: error %d %s", e.Code, Clip(e.Message, MaxJSON))))
}

func renderOther(p *printer, r *transcript.Record) {
	what := "vendor record"
	if r.Item.Kind == transcript.KindAudit {
		what = "audit-only"
	}
	p.entry(r, p.c(sgrDim, r.Type+" ("+what+")"))
}

// path is a DisplayPath, or "(no path)".
func path(s string) string {
	if s == "" {
		return "(no path)"
	}
	return s
}

// number writes a number as JSON would.
func number(f float64) string {
	b, err := json.Marshal(f)
	if err != nil {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return string(b)
}

// blocks renders content blocks as text, one a line.
func blocks(bs []transcript.Block) string {
	parts := make([]string, 0, len(bs))
	for _, b := range bs {
		parts = append(parts, block(b))
	}
	return strings.Join(parts, "\n")
}

func block(b transcript.Block) string {
	switch b.Type {
	case "text":
		return b.Text
	case "image", "audio":
		return "[" + b.Type + " " + b.Mime + "]"
	case "resource_link":
		return "[link " + b.Name + " " + b.URI + "]"
	case "resource":
		return "[resource " + b.URI + "]"
	}
	return "[" + b.Type + "]"
}

func plural(n int, one string) string {
	if n == 1 {
		return one
	}
	return one + "s"
}
