package tee

import (
	"bytes"
	"strings"
	"sync"
	"time"

	"github.com/acptap/acptap/sdk"
)

// Gap reasons.
const (
	ReasonQueueFull = "capture queue full"
	ReasonTooLong   = "line exceeds capture limit"
)

const (
	slabSize  = 64 << 10 // short line copies are carved out of slabs of this size
	slabLine  = 4 << 10  // lines longer than this get their own allocation
	keepSpare = 1 << 20  // a dropped partial-line buffer up to this size is reused
)

// capture turns the chunks of one direction into line Items on the queue. It runs on the copy
// path after the chunk was forwarded, so it never blocks: a full queue means the line is
// dropped and counted into a pending gap, delivered before the next line that fits.
// The copier holds mu while it writes and scans a chunk; finish takes it to end the direction.
type capture struct {
	mu      sync.Mutex
	dir     sdk.Direction
	q       chan<- Item
	maxLine int
	closed  bool

	open bool   // some bytes of a line were seen since the last LF
	n    int    // length of that line so far
	part []byte // its bytes, while n <= maxLine

	gap  Gap // dropped and not yet declared
	slab []byte
}

func newCapture(dir sdk.Direction, q chan<- Item, maxLine int) *capture {
	return &capture{dir: dir, q: q, maxLine: maxLine}
}

// feed scans one forwarded chunk for LFs. The caller holds mu.
func (c *capture) feed(chunk []byte, at time.Time) {
	if c.closed || c.q == nil {
		return
	}
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			c.extend(chunk)
			return
		}
		if c.open {
			c.extend(chunk[:i])
			c.endPartial(at, false)
		} else {
			c.emitShort(chunk[:i], at)
		}
		chunk = chunk[i+1:]
	}
}

// eof ends the direction's stream: a line without LF is delivered with NoLF. Caller holds mu.
func (c *capture) eof(at time.Time) {
	if !c.closed && c.q != nil && c.open {
		c.endPartial(at, true)
	}
}

// extend appends to the line in progress; past maxLine it only counts.
func (c *capture) extend(b []byte) {
	c.open = true
	c.n += len(b)
	if c.n > c.maxLine {
		c.part = nil
		return
	}
	c.part = append(c.part, b...)
}

// endPartial delivers the line assembled across chunks; the receiver gets its buffer.
func (c *capture) endPartial(at time.Time, noLF bool) {
	line, n := c.part, c.n
	c.open, c.n = false, 0
	if n > c.maxLine {
		c.part = nil
		c.drop(ReasonTooLong, n, at)
		return
	}
	if c.send(Item{Dir: c.dir, At: at, Line: line, NoLF: noLF}) {
		c.part = nil
		return
	}
	if cap(line) <= keepSpare {
		c.part = line[:0]
	} else {
		c.part = nil
	}
}

// emitShort delivers a line that lies whole inside one chunk (a copy: the chunk is reused).
func (c *capture) emitShort(line []byte, at time.Time) {
	if len(line) > c.maxLine {
		c.drop(ReasonTooLong, len(line), at)
		return
	}
	if !c.flushGap(at) || c.full() {
		c.drop(ReasonQueueFull, len(line), at)
		return
	}
	if !c.trySend(Item{Dir: c.dir, At: at, Line: c.copyOf(line)}) {
		c.drop(ReasonQueueFull, len(line), at)
	}
}

// send declares any pending gap, then the item; false (and counted) when either does not fit.
func (c *capture) send(it Item) bool {
	if c.flushGap(it.At) && c.trySend(it) {
		return true
	}
	c.drop(ReasonQueueFull, len(it.Line), it.At)
	return false
}

func (c *capture) trySend(it Item) bool {
	select {
	case c.q <- it:
		return true
	default:
		return false
	}
}

// full is a cheap look before copying a line that would not fit anyway.
func (c *capture) full() bool { return cap(c.q) > 0 && len(c.q) == cap(c.q) }

// flushGap tries to declare the pending gap; true when nothing is pending any more.
func (c *capture) flushGap(at time.Time) bool {
	if c.gap.Frames == 0 {
		return true
	}
	g := c.gap
	if !c.trySend(Item{Dir: c.dir, At: at, Gap: &g}) {
		return false
	}
	c.gap = Gap{}
	return true
}

// drop counts one unobserved line into the pending gap.
func (c *capture) drop(reason string, n int, at time.Time) {
	if c.gap.Frames > 0 && c.gap.Reason != reason {
		c.flushGap(at) // keep reasons apart when we can
	}
	switch {
	case c.gap.Frames == 0:
		c.gap.Reason = reason
	case !strings.Contains(c.gap.Reason, reason):
		c.gap.Reason += "; " + reason
	}
	c.gap.Frames++
	c.gap.Bytes += uint64(n)
	if reason != ReasonQueueFull {
		c.flushGap(at)
	}
}

// copyOf returns an owned copy of a short line, carved from a slab (capacity-limited, so a
// receiver's append cannot reach its neighbour).
func (c *capture) copyOf(line []byte) []byte {
	if len(line) > slabLine {
		return bytes.Clone(line)
	}
	if cap(c.slab)-len(c.slab) < len(line) {
		c.slab = make([]byte, 0, slabSize)
	}
	s := len(c.slab)
	c.slab = append(c.slab, line...)
	return c.slab[s:len(c.slab):len(c.slab)]
}

// finish ends capture for this direction: a line in progress is delivered with NoLF, the
// pending gap is delivered with a send bounded by done (copying is over, so waiting here
// holds up nothing but acptap's exit). It returns a gap that could not be delivered, or nil.
// No item is sent after finish.
func (c *capture) finish(done <-chan struct{}) *Gap {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.q == nil {
		c.closed = true
		return nil
	}
	now := time.Now()
	c.eof(now)
	c.closed = true
	if c.gap.Frames == 0 {
		return nil
	}
	g := c.gap
	select {
	case c.q <- Item{Dir: c.dir, At: now, Gap: &g}:
		c.gap = Gap{}
		return nil
	case <-done:
	}
	return &g
}
