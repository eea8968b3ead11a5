package captured

import (
	"bytes"
	"time"

	"github.com/acptap/acptap/sdk"
)

// Splitter is the receiving end of the capture queue: it turns each direction's chunks back
// into line items and gap items, in stream order. A line that spans chunks is carried across
// them (up to the line limit; a longer line is counted and declared as a gap, ReasonTooLong).
// Bytes the tee could not queue (Chunk.Lost) are declared as a ReasonQueueFull gap counting
// every line they touch, including the line in progress when they were dropped and the rest
// of the line they end in, which is skipped up to its LF: so no line is glued together from
// bytes on both sides of a gap. It is not safe for concurrent use.
type Splitter struct {
	maxLine int
	dirs    [3]lineState // indexed by sdk.Direction
}

// lineState is one direction's line in progress.
type lineState struct {
	open bool   // bytes of a line were seen since the last LF
	n    int    // its length so far
	part []byte // its first bytes (up to holdAbove), copied
	// segs are its further bytes, left in their chunks (held, not copied) while
	// n <= maxLine: a long line costs the receiver one copy, at its end, so it
	// keeps up with the tee while the line streams through.
	segs [][]byte
	held []*Chunk
	lost bool // the line in progress is lost: counted in gap, skipped up to its LF
	gap  Gap  // the queue-full gap being counted
}

// holdAbove: past this many bytes, a line in progress holds its chunks instead of copying.
const holdAbove = 64 << 10

// NewSplitter returns a Splitter; maxLine <= 0 means DefaultMaxLine.
func NewSplitter(maxLine int) *Splitter {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	return &Splitter{maxLine: maxLine}
}

// Split passes the line and gap items it.Chunk yields to emit, in order; an item without a
// chunk (a line or gap item, as convert makes) is passed on as is. Lines lying whole inside
// the chunk alias its Data: they are valid until the caller releases the item, which Split
// does not do. Lines assembled across chunks are owned by the receiver.
func (s *Splitter) Split(it Item, emit func(Item)) {
	ch := it.Chunk
	if ch == nil {
		emit(it)
		return
	}
	st := s.state(it.Dir)
	if ch.Lost.Bytes > 0 {
		s.lose(st, ch.Lost, it, emit)
	}
	data := ch.Data
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			s.extend(st, data, ch)
			break
		}
		line := data[:i]
		data = data[i+1:]
		switch {
		case st.lost:
			st.gap.Bytes += uint64(i)
			st.lost = false
			s.emitGap(st, it, emit)
		case st.open:
			s.extend(st, line, ch)
			s.endLine(st, it, false, emit)
		case len(line) > s.maxLine:
			emit(Item{Dir: it.Dir, At: it.At, Gap: &Gap{Frames: 1, Bytes: uint64(len(line)), Reason: ReasonTooLong}})
		default:
			emit(Item{Dir: it.Dir, At: it.At, Line: line})
		}
	}
	if ch.EOF {
		s.eof(st, it, emit)
	}
}

// End ends both directions (the queue was closed): a line in progress is delivered with
// NoLF, as at EOF; a pending gap is declared.
func (s *Splitter) End(at time.Time, emit func(Item)) {
	for _, d := range []sdk.Direction{sdk.C2A, sdk.A2C} {
		s.eof(s.state(d), Item{Dir: d, At: at}, emit)
	}
}

func (s *Splitter) state(d sdk.Direction) *lineState {
	if int(d) < len(s.dirs) {
		return &s.dirs[d]
	}
	return &s.dirs[0]
}

// lose counts dropped bytes into the queue-full gap: every line they touch is lost, the
// line in progress included; if they end inside a line, the rest of it is lost too.
func (s *Splitter) lose(st *lineState, l Lost, it Item, emit func(Item)) {
	frames := l.LFs // lines touched: 1 + LFs, less one when the last dropped byte is an LF
	if !l.EndLF {
		frames++
	}
	if st.lost {
		frames-- // the first line touched was counted already
	}
	bytes := l.Bytes - l.LFs
	if st.open {
		bytes += uint64(st.n)
		st.reset()
	}
	st.gap.Frames += frames
	st.gap.Bytes += bytes
	st.lost = !l.EndLF
	if !st.lost {
		s.emitGap(st, it, emit)
	}
}

// extend appends to the line in progress (b lies in ch); past maxLine it only counts.
func (s *Splitter) extend(st *lineState, b []byte, ch *Chunk) {
	if st.lost {
		st.gap.Bytes += uint64(len(b))
		return
	}
	st.open = true
	st.n += len(b)
	switch {
	case st.n > s.maxLine:
		st.release()
	case st.n <= holdAbove:
		st.part = append(st.part, b...)
	default:
		ch.hold()
		st.segs = append(st.segs, b)
		st.held = append(st.held, ch)
	}
}

// endLine delivers the line assembled across chunks; the receiver owns its bytes.
func (s *Splitter) endLine(st *lineState, it Item, noLF bool, emit func(Item)) {
	n := st.n
	if n > s.maxLine {
		st.reset()
		emit(Item{Dir: it.Dir, At: it.At, Gap: &Gap{Frames: 1, Bytes: uint64(n), Reason: ReasonTooLong}})
		return
	}
	var line []byte
	if len(st.segs) == 0 {
		line = st.part
		st.part = nil
	} else {
		line = make([]byte, 0, n)
		line = append(line, st.part...)
		for _, b := range st.segs {
			line = append(line, b...)
		}
	}
	st.reset()
	emit(Item{Dir: it.Dir, At: it.At, Line: line, NoLF: noLF, Owned: true})
}

// reset forgets the line in progress, letting go of the chunks it held.
func (st *lineState) reset() {
	st.open, st.n = false, 0
	st.part = st.part[:0]
	st.release()
}

// release lets go of the held chunks.
func (st *lineState) release() {
	for i, ch := range st.held {
		ch.unref()
		st.held[i] = nil
	}
	clear(st.segs)
	st.held, st.segs = st.held[:0], st.segs[:0]
}

func (s *Splitter) emitGap(st *lineState, it Item, emit func(Item)) {
	if st.gap.Frames == 0 && st.gap.Bytes == 0 {
		return
	}
	g := st.gap
	st.gap = Gap{}
	g.Reason = ReasonQueueFull
	emit(Item{Dir: it.Dir, At: it.At, Gap: &g})
}

// eof ends a direction: a lost line is declared with its gap; an open line is the last one,
// without LF.
func (s *Splitter) eof(st *lineState, it Item, emit func(Item)) {
	if st.lost {
		st.lost = false
		s.emitGap(st, it, emit)
		return
	}
	if st.open {
		s.endLine(st, it, true, emit)
	}
}

// LineState is one direction's line in progress, as Splitter.State exports it: what a
// Splitter in another process needs (SetState) to go on splitting that direction's
// chunks exactly as this one would have.
type LineState struct {
	Open bool   `json:"open,omitempty"` // bytes of a line were seen since the last LF
	N    int    `json:"n,omitempty"`    // its length so far
	Line []byte `json:"line,omitempty"` // its bytes, when N is within the line limit (copied)
	Lost bool   `json:"lost,omitempty"` // the line in progress is lost (skipped up to its LF)
	Gap  Gap    `json:"gap"`            // the queue-full gap being counted
}

// State returns the line in progress of each direction (c2a, a2c), copied: the splitter is
// not changed and may go on.
func (s *Splitter) State() [2]LineState {
	var out [2]LineState
	for i, d := range []sdk.Direction{sdk.C2A, sdk.A2C} {
		st := s.state(d)
		ls := LineState{Open: st.open, N: st.n, Lost: st.lost, Gap: st.gap}
		if st.open && st.n <= s.maxLine {
			ls.Line = make([]byte, 0, st.n)
			ls.Line = append(ls.Line, st.part...)
			for _, b := range st.segs {
				ls.Line = append(ls.Line, b...)
			}
		}
		out[i] = ls
	}
	return out
}

// SetState makes a fresh splitter continue from State's result (before any Split).
func (s *Splitter) SetState(ls [2]LineState) {
	for i, d := range []sdk.Direction{sdk.C2A, sdk.A2C} {
		st := s.state(d)
		st.reset()
		l := ls[i]
		st.open, st.n, st.lost, st.gap = l.Open, l.N, l.Lost, l.Gap
		if l.Open && l.N <= s.maxLine {
			st.part = append(st.part[:0], l.Line...)
		}
	}
}
