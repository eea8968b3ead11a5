package replay

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/acptap/acptap/sdk/asr"
)

// The loss categories of a replay to ACP v1 are the model's too
// (asr.LossV1…, sdk/asr/losses.go).

// TargetV1 is the replay target of ACP v1.
const TargetV1 = "acp/1"

// CompareV1 is Compare for a replay to ACP v1 recorded again by an ACP v1
// recorder: the source's view is put in the form a v1 replay presents it
// (NormalizeV1), and what the replay leaves out is allowed when the loss
// report or the recording's own declared losses (recorded.Lossy) name its
// category.
func CompareV1(source, recorded *Stream, report LossReport) Result {
	want, drops := NormalizeV1(source)
	got, _ := Normalize(recorded)
	names := report.Names()
	for _, c := range recorded.Lossy {
		names[c] = true
	}
	return compareViews(want, drops, got, names)
}

// NormalizeV1 is Normalize followed by the v1 replay's rules: terminals
// are left out, and so are the terminals of tool calls; cancelled is
// failed, other and vendor statuses are not sent; vendor tool kinds are
// other; a file change is one v1 diff per changed path that has the full
// new text (its operation add or modify, read from whether an old text is
// there; no types, old paths or patch); content blocks v1 lacks, and
// messages left without blocks, are left out; the session's plans are one
// plan, "plan", at the first plan's place, with the last plan's entries
// (statuses and priorities v1 lacks as pending and medium).
func NormalizeV1(s *Stream) ([]Entity, []Drop) {
	ents, drops := Normalize(s)
	n := &normalizer{roots: s.Roots(), drops: drops}
	groups := map[string]*Group{}
	for _, g := range s.Groups {
		groups[g.Key] = g
	}
	planAt := -1
	for _, e := range ents {
		kind, _, _ := strings.Cut(e.Key, ":")
		switch kind {
		case KindTerminal:
			n.drop(e.Key, asr.LossV1Terminals, "a terminal")
			continue
		case KindMessage:
			if !n.messageV1(e) {
				continue
			}
		case KindTool:
			n.toolV1(e, groups[e.Key])
		case KindPlan:
			if !n.planV1(e) {
				continue
			}
			if planAt >= 0 {
				n.out[planAt].Fields = e.Fields
				continue
			}
			planAt = len(n.out)
			e.Key = KindPlan + ":" + V1PlanID
		}
		n.out = append(n.out, e)
	}
	return n.out, n.drops
}

// What ACP v1 has, that a replay to v1 maps into (the v1 schema's enums).
var (
	V1ContentBlocks  = []string{"text", "image", "audio", "resource_link", "resource"}
	V1ToolKinds      = []string{"read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"}
	V1PlanStatuses   = []string{"pending", "in_progress", "completed"}
	V1PlanPriorities = []string{"high", "medium", "low"}
)

// The _meta keys of a file change where an ACP v1 recorder keeps a v1
// diff's full texts, from which a replay to v1 rebuilds the diff.
const (
	MetaV1OldText = "org.acptap/oldText"
	MetaV1NewText = "org.acptap/newText"
)

// V1PlanID is the ID an ACP v1 recorder gives a session's one plan.
const V1PlanID = "plan"

func (n *normalizer) messageV1(e Entity) bool {
	content, _ := e.Fields["content"].([]any)
	var kept []any
	for _, b := range content {
		m, _ := b.(map[string]any)
		typ, _ := m["type"].(string)
		if typ == "reasoning" || slices.Contains(V1ContentBlocks, typ) {
			kept = append(kept, b)
			continue
		}
		n.drop(e.Key, asr.LossV1Content, "a content block of type "+typ)
	}
	if len(kept) == 0 {
		n.drop(e.Key, asr.LossV1Content, "a message without a block v1 can carry")
		return false
	}
	e.Fields["content"] = n.joinTexts(e.Key, kept)
	return true
}

func (n *normalizer) toolV1(e Entity, g *Group) {
	f := e.Fields
	if k, _ := f["kind"].(string); k != "" && !slices.Contains(V1ToolKinds, k) {
		n.drop(e.Key, asr.LossV1ToolKind, "the kind "+k)
		f["kind"] = "other"
	}
	var changes []any
	if g != nil {
		for _, rec := range g.Changes {
			var fc struct {
				Changes []asr.Change `json:"changes"`
				Patch   *asr.Patch   `json:"patch"`
			}
			_ = json.Unmarshal(rec, &fc)
			for _, c := range fc.Changes {
				var newText, oldText *string
				_ = json.Unmarshal(c.Meta[MetaV1NewText], &newText)
				_ = json.Unmarshal(c.Meta[MetaV1OldText], &oldText)
				if newText == nil || c.Path == nil {
					n.drop(e.Key, asr.LossV1Diffs, "a change without its full new text")
					continue
				}
				abs, ok := AbsPath(n.roots, *c.Path)
				if !ok {
					continue // Normalize dropped it (redacted root)
				}
				op := "add"
				if oldText != nil {
					op = "modify"
				}
				if op != c.Op || c.FileType != "" || c.MimeType != "" || c.OldPath != nil || fc.Patch != nil {
					n.drop(e.Key, asr.LossV1Diffs, "what a v1 diff has no field for")
				}
				changes = append(changes, map[string]any{"changes": []any{map[string]any{"op": op, "fileType": "", "mimeType": "", "path": abs, "oldPath": nil}}, "patch": nil})
			}
		}
	}
	f["changes"] = changes
	r, _ := f["result"].(map[string]any)
	if r == nil {
		return
	}
	if t, _ := r["terminalId"].(string); t != "" {
		n.drop(e.Key, asr.LossV1Terminals, "a tool call's terminal")
		r["terminalId"] = ""
	}
	switch st, _ := r["status"].(string); st {
	case "completed", "failed":
	case "cancelled":
		n.drop(e.Key, asr.LossV1ToolStatus, "the status cancelled")
		r["status"] = "failed"
	default:
		n.drop(e.Key, asr.LossV1ToolStatus, "the status "+st)
		f["result"] = nil
	}
}

func (n *normalizer) planV1(e Entity) bool {
	if t, _ := e.Fields["planType"].(string); t != "items" {
		n.drop(e.Key, asr.LossV1Plans, "a plan of type "+t)
		return false
	}
	if e.Key != KindPlan+":"+V1PlanID {
		n.drop(e.Key, asr.LossV1Plans, "the plan's ID")
	}
	entries, _ := e.Fields["entries"].([]any)
	for _, x := range entries {
		m, _ := x.(map[string]any)
		if m == nil {
			continue
		}
		if s, _ := m["status"].(string); !slices.Contains(V1PlanStatuses, s) {
			n.drop(e.Key, asr.LossV1Plans, "an entry status v1 lacks")
			m["status"] = "pending"
		}
		if p, _ := m["priority"].(string); !slices.Contains(V1PlanPriorities, p) {
			n.drop(e.Key, asr.LossV1Plans, "an entry priority v1 lacks")
			m["priority"] = "medium"
		}
	}
	return true
}

// joinTexts joins text blocks in a row (the first's other members kept).
func (n *normalizer) joinTexts(key string, blocks []any) []any {
	var out []any
	for _, b := range blocks {
		m, _ := b.(map[string]any)
		if len(out) > 0 && m["type"] == "text" {
			if prev, _ := out[len(out)-1].(map[string]any); prev["type"] == "text" {
				a, _ := prev["text"].(string)
				t, _ := m["text"].(string)
				joined := maps.Clone(prev)
				joined["text"] = a + t
				out[len(out)-1] = joined
				n.drop(key, asr.LossV1Chunks, "text blocks in a row, read back as one")
				continue
			}
		}
		out = append(out, b)
	}
	return out
}

// AddCategory counts n more records of category in r (detail appended),
// keeping the categories sorted.
func (r *LossReport) AddCategory(category string, n int, detail string) {
	if n <= 0 {
		return
	}
	for i := range r.Categories {
		if c := &r.Categories[i]; c.Category == category {
			c.Records += n
			if detail != "" && !strings.Contains(c.Detail, detail) {
				c.Detail = strings.Trim(c.Detail+"; "+detail, "; ")
			}
			return
		}
	}
	r.Categories = append(r.Categories, Category{Category: category, Records: n, Detail: detail})
	slices.SortFunc(r.Categories, func(a, b Category) int { return strings.Compare(a.Category, b.Category) })
}
