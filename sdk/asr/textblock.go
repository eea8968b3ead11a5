package asr

import (
	"encoding/json"
	"sync"
)

// TextBlock is a plain text content block, {"type":"text","text":…},
// joined from the texts of JSON strings (a message's text chunks). The
// zero value is an empty block.
//
// Its text is kept escaped as Marshal escapes a string (AppendText), in the
// block's own bytes, so the block is not built again when it is read, and a
// record holding the block as it was read is encoded without the block's
// text being scanned again: Marshal copies it, and the record's canonical
// form (Fingerprint, FingerprintOf) writes its members in order around the
// text, where a json.RawMessage of the same bytes is checked for compact
// JSON by each and put in canonical form by the latter.
type TextBlock struct {
	b []byte // textBlockHead, then the text escaped
	// shared: Bytes handed out b's array (the block closed past len(b)), so
	// the next Append copies b before appending to it.
	shared bool
}

const (
	textBlockHead = `{"type":"text","text":"`
	// textBlockRoom is the room a block's first Append makes, so the
	// chunks after it are not each a reallocation while the text is small.
	textBlockRoom = 1024
)

// Append appends the text of raw, a JSON string value with its quotes, to
// the block; false (and the block unchanged) when raw is not a JSON string.
func (t *TextBlock) Append(raw []byte) bool {
	switch {
	case t.b == nil:
		t.b = append(make([]byte, 0, max(textBlockRoom, 2*(len(textBlockHead)+len(raw)))), textBlockHead...)
	case t.shared || cap(t.b)-len(t.b) < len(raw):
		// Doubled (append grows a slice of this size by about a quarter,
		// so a message's text was reallocated some ten times).
		t.b = append(make([]byte, 0, max(2*cap(t.b), len(t.b)+2*len(raw))), t.b...)
		t.shared = false
	}
	var ok bool
	t.b, ok = AppendText(t.b, raw)
	return ok
}

// Grow makes room for n more bytes of escaped text, so that as many are
// appended without a reallocation (a caller that expects the text to reach
// some size, from the texts before it).
func (t *TextBlock) Grow(n int) {
	if n <= 0 {
		return
	}
	if t.b == nil {
		t.b = append(make([]byte, 0, max(textBlockRoom, len(textBlockHead)+n+2)), textBlockHead...)
		return
	}
	if t.shared || cap(t.b)-len(t.b) < n+2 {
		t.b = append(make([]byte, 0, len(t.b)+n+2), t.b...)
		t.shared = false
	}
}

// Len is the length of the block's text, escaped.
func (t *TextBlock) Len() int { return max(len(t.b)-len(textBlockHead), 0) }

// Bytes is the block as it stands. It stays as it is when the block grows
// (the block's bytes are copied first), and must not be modified.
func (t *TextBlock) Bytes() json.RawMessage {
	if t.b == nil {
		return json.RawMessage(textBlockHead + `"}`)
	}
	n := len(t.b)
	if t.shared {
		// Handed out already and unchanged since: the closing bytes are there. Written
		// again, they would be a write to memory a reader may hold, and the block would
		// push another out of knownBlocks.
		return t.b[: n+2 : n+2]
	}
	if cap(t.b)-n >= 2 {
		t.shared = true
	}
	blk := append(t.b, `"}`...)
	blk = blk[: n+2 : n+2]
	knownBlocks.add(blk)
	return blk
}

// knownBlocks are the last text blocks Bytes handed out: the encoders take
// a json.RawMessage that is one of them (the same bytes in the same array:
// the ring keeps them alive, so an array cannot be reused for other bytes
// while it is there) as a text block, compact JSON whose text is escaped
// as Marshal escapes it (TestTextBlockSameAsRaw).
var knownBlocks knownRing

// minKnownBlock is the smallest block the ring keeps: below it, scanning
// the block costs less than looking it up; maxKnownBlock the largest (the
// ring keeps at most 1 MiB alive after the blocks are dropped).
const (
	minKnownBlock = 128
	maxKnownBlock = 64 << 10
)

type knownRing struct {
	mu   sync.Mutex
	ring [16]json.RawMessage
	next int
}

func (k *knownRing) add(b json.RawMessage) {
	if len(b) < minKnownBlock || len(b) > maxKnownBlock {
		return
	}
	k.mu.Lock()
	k.ring[k.next] = b
	k.next = (k.next + 1) % len(k.ring)
	k.mu.Unlock()
}

// has reports whether b is one of the ring's blocks.
func (k *knownRing) has(b []byte) bool {
	if len(b) < minKnownBlock || len(b) > maxKnownBlock {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, r := range k.ring {
		if len(r) == len(b) && &r[0] == &b[0] {
			return true
		}
	}
	return false
}

// canonTextBlock appends the canonical form of text block b (members
// sorted: text, then type).
func canonTextBlock(dst, b []byte) []byte {
	dst = append(dst, `{"text":"`...)
	dst = append(dst, b[len(textBlockHead):len(b)-2]...)
	return append(dst, `","type":"text"}`...)
}
