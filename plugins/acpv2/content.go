package acpv2

import (
	"encoding/json"
	"slices"

	"github.com/acptap/acptap/sdk/asr"
)

// blocks accumulates content blocks. A whole update replaces them; a chunk
// appends, and a plain text chunk ({"type":"text","text":…} and nothing
// else) is joined by concatenation to a plain text block before it
// (ASR-704, ASR-211). Blocks with annotations or _meta are kept whole.
type blocks struct {
	done []json.RawMessage
	open bool            // a plain text block is at the end, in text
	text []byte          // its text
	orig json.RawMessage // that block as received, while nothing was joined to it
}

// set replaces the content with items (a whole update; nil clears).
func (b *blocks) set(items []json.RawMessage) {
	*b = blocks{}
	for _, x := range items {
		b.push(x)
	}
}

// push appends a whole block.
func (b *blocks) push(x json.RawMessage) {
	b.close()
	if t, ok := plainText(x); ok {
		b.open, b.text, b.orig = true, []byte(t), x
		return
	}
	b.done = append(b.done, compact(x))
}

// chunk appends a chunk's block.
func (b *blocks) chunk(x json.RawMessage) {
	if t, ok := plainText(x); ok && b.open {
		b.text = append(b.text, t...)
		b.orig = nil
		return
	}
	b.push(x)
}

func (b *blocks) close() {
	if b.open {
		b.done = append(b.done, b.tail())
		b.open, b.text, b.orig = false, nil, nil
	}
}

func (b *blocks) tail() json.RawMessage {
	if b.orig != nil {
		return compact(b.orig)
	}
	return textPart("text", string(b.text))
}

// list is the content as it stands (never nil).
func (b *blocks) list() []json.RawMessage {
	out := slices.Clone(b.done)
	if b.open {
		out = append(out, b.tail())
	}
	if out == nil {
		out = []json.RawMessage{}
	}
	return out
}

func (b *blocks) empty() bool { return len(b.done) == 0 && !b.open }

// plainText reports whether x is exactly {"type":"text","text":…}.
func plainText(x json.RawMessage) (string, bool) {
	o, ok := parseObj(x)
	if !ok || len(o) != 2 {
		return "", false
	}
	if t, st := o.str("type"); st != valid || t != "text" {
		return "", false
	}
	text, st := o.str("text")
	return text, st == valid
}

// textPart builds {"type":<typ>,"text":<text>} ("text", "reasoning").
func textPart(typ, text string) json.RawMessage {
	b, _ := asr.Marshal(struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}{typ, text})
	return b
}
