package acpasr

import (
	"encoding/json"
	"slices"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// blocks accumulates content blocks. A whole update replaces them; a chunk
// appends, and a plain text chunk ({"type":"text","text":…} and nothing
// else) is joined by concatenation to a plain text block before it
// (ASR-704, ASR-211). Blocks with annotations or _meta are kept whole.
type blocks struct {
	done []json.RawMessage
	open bool            // a plain text block is at the end, in text
	text asr.TextBlock   // that block, joined in place (escaped as asr.Marshal escapes it)
	orig json.RawMessage // that block as received, while nothing was joined to it
	// hint is how long the text of a plain text block may get (the last
	// message's, see message.parts): a new one makes room for it at once.
	hint int
}

// maxTextHint bounds the room a text block makes from a hint.
const maxTextHint = 64 << 10

// set replaces the content with items (a whole update; nil clears).
func (b *blocks) set(items []json.RawMessage) {
	*b = blocks{hint: b.hint}
	for _, x := range items {
		b.push(x)
	}
}

// push appends a whole block.
func (b *blocks) push(x json.RawMessage) {
	o, _ := parseObj(x)
	b.pushOf(x, o)
}

// pushOf is push of x, parsed as o (nil: not an object).
func (b *blocks) pushOf(x json.RawMessage, o obj) {
	v, plain := plainTextOf(o)
	b.pushText(x, v, plain)
}

// pushText is pushOf with plainTextOf(o) given (v, plain).
func (b *blocks) pushText(x, v json.RawMessage, plain bool) {
	b.close()
	if plain {
		b.text = asr.TextBlock{}
		b.text.Grow(min(b.hint+b.hint/4, maxTextHint))
		b.text.Append(v)
		b.open, b.orig = true, own(x)
		return
	}
	b.done = append(b.done, compact(x))
}

// chunk appends a chunk's block.
func (b *blocks) chunk(x json.RawMessage) {
	o, _ := parseObj(x)
	b.chunkOf(x, o)
}

// chunkOf is chunk of x, parsed as o (nil: not an object).
func (b *blocks) chunkOf(x json.RawMessage, o obj) {
	v, plain := plainTextOf(o)
	b.chunkText(x, v, plain)
}

// chunkText is chunkOf with plainTextOf(o) given (v, plain): a caller
// that has it already does not look the block's members up again.
func (b *blocks) chunkText(x, v json.RawMessage, plain bool) {
	if plain && b.open {
		b.text.Append(v) // the joined text, escaped: each part's escaped
		b.orig = nil
		return
	}
	b.pushText(x, v, plain)
}

func (b *blocks) close() {
	if b.open {
		b.done = append(b.done, b.tail())
		b.open, b.text, b.orig = false, asr.TextBlock{}, nil
	}
}

// tail is the open plain text block.
func (b *blocks) tail() json.RawMessage {
	if b.orig != nil {
		return compact(b.orig)
	}
	return b.text.Bytes()
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

// textLen is the length of the open plain text block's text, escaped (0
// when there is none).
func (b *blocks) textLen() int {
	if !b.open {
		return 0
	}
	return b.text.Len()
}

func (b *blocks) empty() bool { return len(b.done) == 0 && !b.open }

// plainText reports whether x is exactly {"type":"text","text":…}.
func plainText(x json.RawMessage) (string, bool) {
	o, _ := parseObj(x)
	v, ok := plainTextOf(o)
	if !ok {
		return "", false
	}
	return asString(v)
}

// plainTextOf is plainText for a block parsed as o (nil: not an object):
// the text member's value as written.
func plainTextOf(o obj) (json.RawMessage, bool) {
	if len(o) != 2 {
		return nil, false
	}
	// Two members (of distinct names: an obj has one per name), read in
	// place rather than looked up one by one.
	ty, tx := o[0], o[1]
	if ty.k != "type" {
		ty, tx = tx, ty
	}
	if ty.k != "type" || tx.k != "text" {
		return nil, false
	}
	if string(ty.v) != `"text"` && !o.strIs("type", "text") {
		return nil, false
	}
	if strStateOf(tx.v) != valid {
		return nil, false
	}
	return tx.v, true
}

// textPart builds {"type":<typ>,"text":<text>} ("text", "reasoning").
func textPart(typ, text string) json.RawMessage {
	b, _ := asr.Marshal(struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}{typ, text})
	return b
}

// ContentBlockProblem says why x cannot be an ASR content block, or ""
// when it can. The ASR schema's contentBlock follows ACP's content blocks:
// an object with a non-empty type and, for text, image, audio,
// resource_link and resource blocks, the members ACP requires, of ACP's
// types (for the ASR parts reasoning and refusal, theirs). The engine
// drops or audits a block with a problem; a translator can use this to
// leave such a block untouched for the engine's audit record.
func ContentBlockProblem(x json.RawMessage) string {
	if !json.Valid(x) {
		return "not JSON"
	}
	return blockProblem(x)
}

// ValidBlockProblem is ContentBlockProblem for x known to be one JSON
// value (a part of a frame a strict parser took, as acpv1's fast path
// does): it skips the validity pass, which is most of the cost.
func ValidBlockProblem(x json.RawMessage) string { return blockProblem(x) }

// blockProblem is ContentBlockProblem for a part of a checked frame.
func blockProblem(x json.RawMessage) string {
	o, ok := parseObj(x)
	if !ok {
		return "not an object"
	}
	return blockProblemOf(o)
}

// blockProblemOf is blockProblem for a block parsed as o.
func blockProblemOf(o obj) string {
	typ, st := o.str("type")
	if st != valid || typ == "" {
		return "no type"
	}
	for _, k := range []string{"annotations", "_meta"} {
		if _, st := o.object(k); st == invalid {
			return k + " is not an object"
		}
	}
	need := func(keys ...string) string {
		for _, k := range keys {
			if o.strState(k) != valid {
				return typ + " block without a string " + k
			}
		}
		return ""
	}
	optional := func(keys ...string) string {
		for _, k := range keys {
			if o.strState(k) == invalid {
				return typ + " block with a " + k + " that is not a string"
			}
		}
		return ""
	}
	switch typ {
	case "text", "refusal":
		return need("text")
	case "image", "audio":
		if p := need("data", "mimeType"); p != "" {
			return p
		}
		return optional("uri")
	case "resource_link":
		if p := need("name", "uri"); p != "" {
			return p
		}
		if p := optional("title", "description", "mimeType"); p != "" {
			return p
		}
		if v, st := o.member("size"); st == valid && !isInt(v) {
			return "resource_link block with a size that is not an integer"
		}
	case "resource":
		r, st := o.object("resource")
		if st != valid {
			return "resource block without a resource object"
		}
		if r.strState("uri") != valid {
			return "resource without a string uri"
		}
		tst, bst, mst := r.strState("text"), r.strState("blob"), r.strState("mimeType")
		switch {
		case tst == invalid || tst == isNull || bst == invalid || bst == isNull:
			return "resource text or blob is not a string"
		case tst != valid && bst != valid:
			return "resource without text or blob"
		case mst == invalid:
			return "resource mimeType is not a string"
		}
	case "reasoning":
		_, tst := o.str("text")
		_, sst := o.str("signature")
		sum, mst := o.array("summary")
		_, ost := o.member("opaque")
		if tst == invalid || tst == isNull || sst == invalid || sst == isNull || mst == invalid || mst == isNull {
			return "reasoning part with a text, summary or signature of the wrong type"
		}
		for _, x := range sum {
			if _, ok := asString(x); !ok {
				return "reasoning summary item is not a string"
			}
		}
		if tst != valid && mst != valid && ost == missing {
			return "reasoning part without text, summary or opaque"
		}
	}
	return ""
}

// blocksOnly keeps the items that are content blocks ASR can hold, with a
// diagnostic for the others.
func (s *stream) blocksOnly(what string, items []json.RawMessage) []json.RawMessage {
	out := items[:0:0]
	for _, x := range items {
		if p := ContentBlockProblem(x); p != "" {
			s.c.diag(sdk.SeverityWarning, s.id, what+": content block dropped", p)
			continue
		}
		out = append(out, x)
	}
	return out
}
