package transcript

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/acptap/acptap/sdk/aep"
)

// Downlevel removes from v what capture level l does not allow (the AEP
// capture levels, AEP-0001 §8.2): full keeps everything; redacted passes
// every free text and tool payload through the AEP redaction pipeline;
// metadata replaces free text and file contents by their size; none keeps
// only the items' kinds, times and statuses. The records' JSON goes at any
// level below full.
func Downlevel(v *View, l aep.Level, red aep.Redactor) {
	if l >= aep.Full {
		return
	}
	v.Header = nil
	text := func(s string) string {
		switch l {
		case aep.Redacted:
			return red.Text(s)
		case aep.Metadata:
			if s == "" {
				return ""
			}
			return fmt.Sprintf("[%d characters]", len([]rune(s)))
		}
		return ""
	}
	raw := func(r json.RawMessage) json.RawMessage {
		if len(r) == 0 {
			return r
		}
		if l == aep.Redacted {
			var x any
			if json.Unmarshal(r, &x) == nil {
				if b, err := json.Marshal(red.Value(x)); err == nil {
					return b
				}
			}
		}
		if l == aep.Metadata {
			b, _ := json.Marshal(fmt.Sprintf("[%d bytes]", len(r)))
			return b
		}
		return nil
	}
	// path levels a file path: redacted through the pipeline, kept at
	// metadata (paths are metadata there), gone below.
	path := func(s string) string {
		switch {
		case l == aep.Redacted:
			return red.Text(s)
		case l < aep.Metadata:
			return ""
		}
		return s
	}
	blocks := func(bs []Block) {
		for j := range bs {
			bs[j].Text, bs[j].URI, bs[j].Name = text(bs[j].Text), text(bs[j].URI), text(bs[j].Name)
		}
	}
	diffs := func(ds []Diff) {
		for j := range ds {
			ds[j].Patch = patchText(ds[j].Patch, l, red)
			ds[j].Path, ds[j].OldPath = path(ds[j].Path), path(ds[j].OldPath)
		}
	}
	// a terminal can be in two items (its own and the tool call's that ran
	// it): level it once
	leveled := map[*Terminal]bool{}
	terminal := func(t *Terminal) {
		if t != nil && !leveled[t] {
			leveled[t] = true
			t.Output, t.Command, t.Cwd = text(t.Output), text(t.Command), path(t.Cwd)
		}
	}
	for i := range v.Items {
		it := &v.Items[i]
		it.JSON = nil
		blocks(it.Blocks)
		it.Error = raw(it.Error)
		if it.Failure != nil {
			it.Failure.Message = text(it.Failure.Message)
		}
		it.Summary = keepSummary(it, text)
		diffs(it.Diffs)
		terminal(it.Terminal)
		if t := it.Tool; t != nil {
			t.Input, t.Raw = raw(t.Input), raw(t.Raw)
			if l < aep.Metadata {
				t.Title, t.Paths = "", nil
			} else if l == aep.Redacted {
				t.Title = red.Text(t.Title)
			}
			blocks(t.Result)
			diffs(t.Diffs)
			terminal(t.Terminal)
		}
		if p := it.Permission; p != nil {
			p.Description, p.Command = text(p.Description), text(p.Command)
			if l < aep.Metadata {
				p.Title = ""
			} else if l == aep.Redacted {
				p.Title = red.Text(p.Title)
			}
		}
		if q := it.Input; q != nil {
			q.Message, q.Response, q.URL = text(q.Message), raw(q.Response), text(q.URL)
		}
		for j := range it.Plan {
			it.Plan[j].Content = text(it.Plan[j].Content)
		}
		if it.State != nil {
			it.State.Error = raw(it.State.Error)
		}
	}
}

// keepSummary keeps the one-line summaries that are metadata (kinds,
// severities, statuses) and levels the free-text ones (a session title).
func keepSummary(it *Item, text func(string) string) string {
	if it.Kind == KindSessionInfo {
		return text(it.Summary)
	}
	return it.Summary
}

func patchText(p string, l aep.Level, red aep.Redactor) string {
	switch {
	case p == "":
		return ""
	case l == aep.Redacted:
		return red.Text(p)
	case l == aep.Metadata:
		add, del := 0, 0
		for line := range strings.SplitSeq(p, "\n") {
			switch {
			case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
			case strings.HasPrefix(line, "+"):
				add++
			case strings.HasPrefix(line, "-"):
				del++
			}
		}
		return fmt.Sprintf("[+%d −%d lines]", add, del)
	}
	return ""
}
