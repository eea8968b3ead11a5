package pluginwire

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/acptap/acptap/internal/jsonscan"
	"github.com/acptap/acptap/sdk"
)

// maxPending bounds the requests a FrameBuilder remembers while it waits
// for their responses; the oldest are forgotten first.
const maxPending = 1 << 16

type pendingKey struct {
	dir sdk.Direction
	id  string
}

type pendingReq struct {
	seq    uint64
	method string
}

// FrameBuilder turns wire lines into frames the way the host's router does:
// a JSON-RPC batch (an array) is split into one frame per element, and each
// response is joined to its request by (direction, id) — both sides number
// their ids independently, so id 0 can be in flight both ways at once.
// It is deterministic and never fails: a line that is not JSON is one frame.
type FrameBuilder struct {
	pending map[pendingKey]pendingReq
	order   []pendingKey
	// Forgotten counts requests dropped from memory before their response.
	Forgotten uint64
}

// NewFrameBuilder returns an empty builder.
func NewFrameBuilder() *FrameBuilder {
	return &FrameBuilder{pending: make(map[pendingKey]pendingReq)}
}

var (
	keyID         = []byte(`"id"`)
	unicodeEscape = []byte(`\u`)
)

// Line appends the frames of one wire line to out.
func (b *FrameBuilder) Line(out []sdk.Frame, seq uint64, dir sdk.Direction, at time.Time, line []byte) []sdk.Frame {
	trim := bytes.TrimSpace(line)
	if len(trim) > 0 && trim[0] == '[' {
		var arr []json.RawMessage
		if json.Unmarshal(trim, &arr) == nil && len(arr) > 0 {
			for i, e := range arr {
				f := sdk.Frame{Kind: sdk.KindLine, Seq: seq, Dir: dir, At: at, Data: e, BatchIndex: i, BatchSize: len(arr)}
				b.join(&f, e)
				out = append(out, f)
			}
			return out
		}
	}
	f := sdk.Frame{Kind: sdk.KindLine, Seq: seq, Dir: dir, At: at, Data: line}
	if len(trim) > 0 && trim[0] == '{' {
		b.join(&f, trim)
	}
	return append(out, f)
}

// Session appends a session frame.
func (b *FrameBuilder) Session(out []sdk.Frame, seq uint64, dir sdk.Direction, at time.Time, info sdk.SessionInfo) []sdk.Frame {
	return append(out, sdk.Frame{Kind: sdk.KindSession, Seq: seq, Dir: dir, At: at, Session: &info})
}

// Gap appends a gap frame.
func (b *FrameBuilder) Gap(out []sdk.Frame, seq uint64, dir sdk.Direction, at time.Time, g sdk.Gap) []sdk.Frame {
	return append(out, sdk.Frame{Kind: sdk.KindGap, Seq: seq, Dir: dir, At: at, Gap: g})
}

func (b *FrameBuilder) join(f *sdk.Frame, elem []byte) {
	// Most lines are notifications: without an "id" key there is nothing to
	// join, and decoding the whole line to learn that is the router's main
	// cost. The key can only be spelled "id" or with a \u escape.
	if !hasIDKey(elem) && !bytes.Contains(elem, unicodeEscape) {
		return
	}
	h := f.RPC() // kept with the frame: an in-process mapper reads it again for free
	if len(h.ID) == 0 || string(h.ID) == "null" || (h.Kind == sdk.NotRPC && h.Err != sdk.ErrNotRPC) || !valid(elem) {
		return
	}
	id := string(h.ID)
	if h.Kind == sdk.Request {
		k := pendingKey{f.Dir, id}
		if _, dup := b.pending[k]; !dup {
			b.order = append(b.order, k)
		}
		b.pending[k] = pendingReq{seq: f.Seq, method: h.Method}
		b.evict()
		return
	}
	other := sdk.A2C
	if f.Dir == sdk.A2C {
		other = sdk.C2A
	}
	k := pendingKey{other, id}
	if p, ok := b.pending[k]; ok {
		f.ReplyTo, f.ReplyToMethod = p.seq, p.method
		delete(b.pending, k)
	}
}

// hasIDKey is bytes.Contains(b, keyID), found by its tail: a search for
// keyID stops at every '"' of the line, its i is far rarer.
func hasIDKey(b []byte) bool {
	for from := 1; from+len(keyID)-1 <= len(b); {
		j := bytes.Index(b[from:], keyID[1:])
		if j < 0 {
			return false
		}
		at := from + j
		if b[at-1] == keyID[0] {
			return true
		}
		from = at + 1
	}
	return false
}

// valid is json.Valid(elem): a line as a peer writes it has no whitespace
// outside its strings, which jsonscan.Compact checks in one pass without
// encoding/json's scanner (Compact true implies Valid true); any other goes
// to json.Valid. TestFrameBuilderValid compares the two.
func valid(elem []byte) bool { return jsonscan.Compact(elem) || json.Valid(elem) }

func (b *FrameBuilder) evict() {
	for len(b.pending) > maxPending && len(b.order) > 0 {
		k := b.order[0]
		b.order = b.order[1:]
		if _, ok := b.pending[k]; ok {
			delete(b.pending, k)
			b.Forgotten++
		}
	}
	// Compact the order slice once answered keys dominate it.
	if len(b.order) > 2*maxPending {
		live := b.order[:0]
		for _, k := range b.order {
			if _, ok := b.pending[k]; ok {
				live = append(live, k)
			}
		}
		b.order = live
	}
}
