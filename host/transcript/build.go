package transcript

import (
	"encoding/json"
	"fmt"
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
		byKey: map[string]int{}}
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

// item returns the item at key, or the one r revises, or a new one.
func (b *builder) item(key string, r *Record) (*Item, bool) {
	return b.itemOf(key, r.Item.Kind, r)
}

func (b *builder) itemOf(key, kind string, r *Record) (*Item, bool) {
	if key != "" {
		if i, ok := b.byKey[key]; ok {
			b.cur = i
			return &b.v.Items[i], false
		}
	}
	if r.Supersedes != "" {
		if i, ok := b.byRec[r.Supersedes]; ok {
			b.cur = i
			return &b.v.Items[i], false
		}
	}
	b.v.Items = append(b.v.Items, Item{Kind: kind, Seq: r.Item.Seq, ID: r.Item.ID, TS: r.Item.TS, Entity: r.Item.Entity})
	b.cur = len(b.v.Items) - 1
	if key != "" {
		b.byKey[key] = b.cur
	}
	return &b.v.Items[b.cur], true
}

// attach notes that r went into it (the current item).
func (b *builder) attach(it *Item, r *Record, line []byte) {
	id := r.Item.ID
	b.byRec[id] = b.cur
	if len(it.Records) > 0 && r.Supersedes != "" {
		it.Revised = true
	}
	if r.Item.Status != "" {
		it.Status = r.Item.Status
	}
	it.Records = append(it.Records, id)
	if n := r.Native; n != nil && n.Ref != nil {
		it.Refs = append(it.Refs, Ref{Record: id, Wire: n.Ref.Wire, Frames: n.Ref.Frames})
	}
	if b.o.WithJSON {
		it.JSON = append(it.JSON, json.RawMessage(string(line)))
	}
}

// add folds one record into the view by its type's fold.
func (b *builder) add(r *Record, line []byte) {
	b.n++
	b.v.Counts[r.Type]++
	t, ok := recordTypes[r.Type]
	if !ok {
		t.fold = foldNew
	}
	t.fold(b, r)
	b.attach(&b.v.Items[b.cur], r, line)
}

// foldKeyed: an entity's records (a message's chunks, a permission and
// its answer, a plan's revisions …) make one item, the latest record's.
func foldKeyed(b *builder, r *Record) {
	it, _ := b.item(r.Item.Kind+"/"+r.Item.Entity, r)
	it.replace(r.Item)
}

// foldNew: a record of its own (or the revision of one).
func foldNew(b *builder, r *Record) {
	it, _ := b.item("", r)
	it.replace(r.Item)
}

// replace takes the content of n into it, keeping its place, records and
// refs (and the latest status, which attach sets).
func (it *Item) replace(n Item) {
	n.Kind, n.Seq, n.ID, n.TS, n.Status = it.Kind, it.Seq, it.ID, it.TS, it.Status
	n.Records, n.Refs, n.Revised, n.JSON = it.Records, it.Refs, it.Revised, it.JSON
	if n.Summary == "" && n.Kind == KindMessage {
		n.Summary = it.Summary
	}
	*it = n
}

// foldDeclaration: a record of its own whose losses the view lists.
func foldDeclaration(b *builder, r *Record) {
	foldNew(b, r)
	for _, c := range r.Item.Lossy {
		b.v.Losses = append(b.v.Losses, Loss{Category: c, Record: r.Item.ID})
	}
}

func foldToolCall(b *builder, r *Record) {
	c := r.Item.Tool
	t := b.tool(c.CallID, r).Tool
	t.Name, t.Title, t.Kind = c.Name, c.Title, c.Kind
	if len(c.Input) > 0 {
		t.Input = c.Input
	}
	t.Paths = c.Paths
}

func foldToolResult(b *builder, r *Record) {
	res := r.Item.Tool
	it := b.tool(res.CallID, r)
	t := it.Tool
	t.Status = res.Status
	if n := len(t.Statuses); n == 0 || t.Statuses[n-1] != res.Status {
		t.Statuses = append(t.Statuses, res.Status)
	}
	t.Result = res.Result
	if len(res.Raw) > 0 {
		t.Raw = res.Raw
	}
	if res.Exec != "" {
		t.Exec = res.Exec
		if ti, ok := b.byTerm[res.Exec]; ok && b.v.Items[ti].Terminal != nil {
			t.Terminal = b.v.Items[ti].Terminal
		}
		b.byTerm[res.Exec] = b.cur
	}
}

// foldFileChange: a file change goes into its tool call's item, or makes
// its own when it has no cause.
func foldFileChange(b *builder, r *Record) {
	if r.Item.Cause != "" {
		b.tool(r.Item.Cause, r).Tool.Diffs = r.Item.Diffs
		return
	}
	foldNew(b, r)
}

// foldTerminal: a terminal goes into the tool call that ran it, or makes
// its own item.
func foldTerminal(b *builder, r *Record) {
	term := r.Item.Terminal
	var it *Item
	if i, ok := b.byTerm[term.ID]; ok {
		it, b.cur = &b.v.Items[i], i
	} else {
		it, _ = b.item("terminal/"+term.ID, r)
		b.byTerm[term.ID] = b.cur
	}
	if it.Tool != nil {
		it.Tool.Terminal = term
	} else {
		it.Terminal = term
	}
}

func (b *builder) tool(callID string, r *Record) *Item {
	if i, ok := b.byCall[callID]; ok {
		b.cur = i
		return &b.v.Items[i]
	}
	it, _ := b.itemOf("tool/"+callID, KindTool, r)
	if it.Tool == nil {
		it.Tool = &Tool{CallID: callID}
	}
	b.byCall[callID] = b.cur
	return it
}

// blocks turns ACP content blocks (and ASR's reasoning and refusal) into
// display blocks; a block of a type it does not know keeps its type and
// JSON, one that is not a block is "(invalid block)".
func blocks(raw []json.RawMessage) []Block {
	var out []Block
	for _, r := range raw {
		var c struct {
			Type     string          `json:"type"`
			Text     string          `json:"text"`
			Summary  []string        `json:"summary"`
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
			out = append(out, Block{Type: BlockInvalid, Text: string(r)})
			continue
		}
		switch c.Type {
		case "reasoning":
			t := c.Text
			if t == "" {
				t = strings.Join(c.Summary, "\n\n")
			}
			out = append(out, Block{Type: c.Type, Text: t})
		case "text", "refusal":
			out = append(out, Block{Type: c.Type, Text: c.Text})
		case "image", "audio":
			out = append(out, Block{Type: c.Type, Mime: c.MimeType, Text: c.URI, URI: c.URI})
		case "resource_link":
			out = append(out, Block{Type: c.Type, Text: firstNonEmpty(c.URI, c.Name), Mime: c.MimeType, URI: c.URI, Name: c.Name})
		case "resource":
			var res struct {
				URI  string `json:"uri"`
				Text string `json:"text"`
			}
			_ = json.Unmarshal(c.Resource, &res)
			out = append(out, Block{Type: c.Type, Text: firstNonEmpty(res.Text, res.URI), URI: res.URI})
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
			out = append(out, Block{Type: c.Type, Text: string(r)})
		}
	}
	return out
}

// BlockInvalid is the type of a block that is not a JSON object.
const BlockInvalid = "(invalid block)"

func fileDiffs(f asr.FileChange) []Diff {
	var out []Diff
	for _, c := range f.Changes {
		d := Diff{Op: c.Op, Path: DisplayPath(c.Path), OldPath: DisplayPath(c.OldPath)}
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

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
