package transcript

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"
)

//go:embed export.css
var exportCSS string

//go:embed export.html.tmpl
var exportTmpl string

var funcs = template.FuncMap{
	"css":    func() template.CSS { return template.CSS(exportCSS) },
	"json":   func(r json.RawMessage) string { return indentJSON(r) },
	"join":   strings.Join,
	"lines":  func(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") },
	"prefix": strings.HasPrefix,
	"money":  func(f float64) string { return fmt.Sprintf("%.4g", f) },
}

var page = template.Must(template.New("export").Funcs(funcs).Parse(exportTmpl))

// Page is what an export shows above the transcript.
type Page struct {
	Title   string
	Capture string // the capture level applied
	Agent   string
	Started string
	View    *View
}

// RenderHTML writes v as one self-contained HTML page: styles inline, no
// script, nothing fetched, so it opens offline and can be mailed.
func RenderHTML(w io.Writer, p Page) error { return page.Execute(w, p) }

// RenderMarkdown writes v as Markdown.
func RenderMarkdown(w io.Writer, p Page) error {
	bw := &mdWriter{w: w}
	bw.f("# %s\n\n", p.Title)
	if p.Agent != "" {
		bw.f("- agent: %s\n", p.Agent)
	}
	if p.Started != "" {
		bw.f("- started: %s\n", p.Started)
	}
	bw.f("- capture: %s\n", p.Capture)
	if len(p.View.Losses) > 0 {
		var cats []string
		for _, l := range p.View.Losses {
			cats = append(cats, "`"+l.Category+"`")
		}
		bw.f("- declared losses: %s\n", strings.Join(cats, ", "))
	}
	bw.f("\n")
	for i := range p.View.Items {
		it := &p.View.Items[i]
		f, ok := markdown[it.Kind]
		if !ok {
			f = mdOther
		}
		f(bw, it)
	}
	return bw.err
}

// markdown is the table of item kinds the Markdown export renders; another
// kind is rendered by mdOther (its summary, if any).
var markdown = map[string]func(bw *mdWriter, it *Item){
	KindMessage:     mdMessage,
	KindTool:        mdTool,
	KindPermission:  mdPermission,
	KindInput:       mdInput,
	KindPlan:        mdPlan,
	KindState:       mdState,
	KindUsage:       mdUsage,
	KindDeclaration: mdDeclaration,
	KindFileChange:  mdFileChange,
}

func mdMessage(bw *mdWriter, it *Item) {
	who := it.Role
	if it.Reasoning {
		who += " (reasoning)"
	}
	bw.f("### %s\n\n", who)
	for _, b := range it.Blocks {
		if b.Type == "reasoning" && !it.Reasoning {
			bw.f("> %s\n\n", strings.ReplaceAll(b.Text, "\n", "\n> "))
			continue
		}
		bw.f("%s\n\n", b.Text)
	}
}

func mdTool(bw *mdWriter, it *Item) {
	t := it.Tool
	bw.f("#### Tool: %s `%s` — %s\n\n", firstNonEmpty(t.Title, t.Name), t.Kind, firstNonEmpty(t.Status, "pending"))
	if len(t.Input) > 0 {
		bw.f("```json\n%s\n```\n\n", indentJSON(t.Input))
	}
	for _, b := range t.Result {
		bw.f("```\n%s\n```\n\n", b.Text)
	}
	for _, d := range t.Diffs {
		if d.Patch != "" {
			bw.f("```diff\n%s\n```\n\n", strings.TrimSuffix(d.Patch, "\n"))
		}
	}
	if t.Terminal != nil && t.Terminal.Output != "" {
		bw.f("```console\n$ %s\n%s\n```\n\n", t.Terminal.Command, strings.TrimSuffix(t.Terminal.Output, "\n"))
	}
}

func mdPermission(bw *mdWriter, it *Item) {
	p := it.Permission
	bw.f("**Permission:** %s — %s", p.Title, firstNonEmpty(p.Decision, p.Status))
	if p.Selected != "" {
		bw.f(" (%s)", p.Selected)
	}
	bw.f("\n\n")
}

func mdInput(bw *mdWriter, it *Item) {
	bw.f("**Question:** %s — %s\n\n", it.Input.Message, it.Input.Status)
}

func mdPlan(bw *mdWriter, it *Item) {
	bw.f("**Plan**\n\n")
	for _, e := range it.Plan {
		mark := " "
		if e.Status == "completed" {
			mark = "x"
		}
		bw.f("- [%s] %s\n", mark, e.Content)
	}
	bw.f("\n")
}

func mdState(bw *mdWriter, it *Item) {
	if it.State.StopReason != "" || len(it.State.Error) > 0 {
		bw.f("*%s %s %s*\n\n", it.State.State, it.State.StopReason, strings.TrimSpace(string(it.State.Error)))
	}
}

func mdUsage(bw *mdWriter, it *Item) {
	bw.f("*usage: %.0f / %.0f tokens, cost %s %s*\n\n", it.Usage.Used, it.Usage.Size, fmt.Sprintf("%.4g", it.Usage.Cost), it.Usage.Currency)
}

func mdDeclaration(bw *mdWriter, it *Item) {
	bw.f("*declared lost: %s*\n\n", strings.Join(it.Lossy, ", "))
}

func mdFileChange(bw *mdWriter, it *Item) {
	for _, d := range it.Diffs {
		bw.f("```diff\n%s\n```\n\n", strings.TrimSuffix(d.Patch, "\n"))
	}
}

func mdOther(bw *mdWriter, it *Item) {
	if it.Summary != "" {
		bw.f("*%s: %s*\n\n", it.Kind, it.Summary)
	}
}

type mdWriter struct {
	w   io.Writer
	err error
}

func (m *mdWriter) f(format string, args ...any) {
	if m.err == nil {
		_, m.err = fmt.Fprintf(m.w, format, args...)
	}
}

func indentJSON(r json.RawMessage) string {
	var b strings.Builder
	var x any
	if json.Unmarshal(r, &x) != nil {
		return string(r)
	}
	out, _ := json.MarshalIndent(x, "", "  ")
	b.Write(out)
	return b.String()
}
