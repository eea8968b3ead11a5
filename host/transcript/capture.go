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
	for i := range v.Items {
		it := &v.Items[i]
		it.JSON = nil
		for j := range it.Blocks {
			it.Blocks[j].Text = text(it.Blocks[j].Text)
		}
		it.Summary = keepSummary(it, text)
		for j := range it.Diffs {
			it.Diffs[j].Patch = patchText(it.Diffs[j].Patch, l, red)
		}
		if it.Terminal != nil {
			it.Terminal.Output, it.Terminal.Command = text(it.Terminal.Output), text(it.Terminal.Command)
		}
		if t := it.Tool; t != nil {
			t.Input, t.Raw = raw(t.Input), raw(t.Raw)
			if l < aep.Metadata {
				t.Title, t.Paths = "", nil
			} else if l == aep.Redacted {
				t.Title = red.Text(t.Title)
			}
			for j := range t.Result {
				t.Result[j].Text = text(t.Result[j].Text)
			}
			for j := range t.Diffs {
				t.Diffs[j].Patch = patchText(t.Diffs[j].Patch, l, red)
				if l < aep.Metadata {
					t.Diffs[j].Path = ""
				}
			}
			if t.Terminal != nil {
				t.Terminal.Output, t.Terminal.Command = text(t.Terminal.Output), text(t.Terminal.Command)
			}
		}
		if p := it.Permission; p != nil {
			p.Description = text(p.Description)
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
