package tee

import (
	"bytes"
	"sync"
	"time"

	"github.com/acptap/acptap/host/captured"
	"github.com/acptap/acptap/sdk"
)

// copyBelow: a read shorter than this is copied (into a slab) before it is queued, so a quiet
// session does not pin a whole read buffer per line; a longer read hands the buffer itself.
const copyBelow = 8 << 10

// capture hands the chunks of one direction to the queue. It runs on the copy path just
// before the chunk is forwarded and never blocks: when the queue is full (in items or in
// bytes) the chunk is dropped, and its bytes and LFs are counted as Lost on the next chunk
// that fits. It does not look for line ends (the receiver splits, see captured.Splitter); it only
// notes whether the last byte forwarded was an LF, to know at EOF whether a line is open.
// The copier holds mu while it queues and writes a chunk; finish takes it to end the direction.
type capture struct {
	mu     sync.Mutex
	dir    sdk.Direction
	q      chan<- captured.Item
	bound  *captured.Bound
	closed bool

	midLine bool            // the last byte forwarded was not an LF
	lost    captured.Lost   // dropped since the last chunk that was queued
	uncount []byte          // a dropped read whose LFs settle counts, after its write
	tally   *captured.Chunk // a queued chunk stored through the arena's file, tallied by settle
	tallied []byte          // its bytes (the copier's own buffer, unchanged until the next read)
	ended   bool            // the direction ended (eof)
	endSent bool            // the receiver was told (an EOF chunk, or nothing was open)

	arena *captured.Arena // where read buffers and slabs come from (nil: the heap pool)
	bell  chan<- struct{} // Config.Doorbell
	rung  bool            // a chunk was queued since the doorbell last rang
	slab  *captured.Slab  // the slab short reads are copied into now
}

func newCapture(dir sdk.Direction, q chan<- captured.Item, bound *captured.Bound, arena *captured.Arena) *capture {
	return &capture{dir: dir, q: q, bound: bound, arena: arena}
}

// feed queues data, the bytes read for the chunk ch (into its buffer, or into the copier's
// own when ch is cold), received at at. It returns true when ch itself
// went onto the queue: the caller must then ch.WriteDone() once its write returned and read into
// a fresh buffer. After the write the caller calls settle. The caller holds mu.
func (c *capture) feed(ch *captured.Chunk, data []byte, at time.Time) (handed bool) {
	if c.closed || c.q == nil {
		return false
	}
	n := len(data)
	endLF := data[n-1] == '\n'
	c.midLine = !endLF
	size := int64(n)
	if n >= copyBelow {
		size = int64(len(ch.Buf()))
	}
	if c.full() || !c.bound.Take(size) {
		c.drop(data, endLF)
		return false
	}
	it := ch
	if n < copyBelow {
		it = c.copyOf(data)
	} else {
		if ch.Cold() {
			ch.Store(data) // data was read into the copier's own buffer
			c.tally, c.tallied = ch, data
		}
		ch.Share(n)
	}
	it.Lost = c.lost
	it.Charge(c.bound, size)
	select {
	case c.q <- captured.Item{Dir: c.dir, At: at, Chunk: it}:
		c.lost, c.rung = captured.Lost{}, true
		return it == ch
	default:
		c.tally, c.tallied = nil, nil
		if it == ch {
			it.Uncharge()
			ch.Unshare()
		} else {
			it.Release() // the slab's part
		}
		c.drop(data, endLF)
		return false
	}
}

// ringAfterWrite rings the doorbell for what feed queued, once its write returned. The
// caller holds mu.
func (c *capture) ringAfterWrite() {
	if c.rung {
		c.rung = false
		ring(c.bell)
	}
}

// drop counts a chunk that did not fit; its LFs are counted by settle, once
// it was written.
func (c *capture) drop(data []byte, endLF bool) {
	c.lost.Bytes += uint64(len(data))
	c.lost.EndLF = endLF
	c.uncount = data
}

// settle finishes counting a dropped read. The copier calls it after the
// write, before it reads again (the read buffer is still the chunk's). The
// caller holds mu.
func (c *capture) settle() {
	if c.uncount != nil {
		c.lost.LFs += uint64(bytes.Count(c.uncount, []byte{'\n'}))
		c.uncount = nil
	}
	if c.tally != nil {
		b := c.tallied
		c.tally.Tally(bytes.Count(b, []byte{'\n'}), b[len(b)-1] == '\n')
		c.tally, c.tallied = nil, nil
	}
}

// full is a cheap look before preparing a chunk that would not fit anyway.
func (c *capture) full() bool { return cap(c.q) > 0 && len(c.q) == cap(c.q) }

// pending says whether the receiver still has to hear of this direction's end.
func (c *capture) pending() bool {
	return c.lost.Bytes > 0 || (c.ended && !c.endSent)
}

// eof ends the direction's stream. If a line is open or bytes were lost, the receiver is
// told with an EOF chunk (which also carries the lost bytes); if that does not fit now, finish
// delivers it. The caller holds mu.
func (c *capture) eof(at time.Time) {
	if c.closed || c.q == nil || c.ended {
		return
	}
	c.ended = true
	if !c.midLine && c.lost.Bytes == 0 {
		c.endSent = true
		return
	}
	c.trySendEnd(at)
}

func (c *capture) trySendEnd(at time.Time) {
	select {
	case c.q <- captured.Item{Dir: c.dir, At: at, Chunk: &captured.Chunk{Lost: c.lost, EOF: true}}:
		c.lost, c.endSent = captured.Lost{}, true
		ring(c.bell) // nothing is forwarded after an end
	default:
	}
}

// copyOf returns a copy of a short read, a part of the current slab (a new one when it has
// no room left).
func (c *capture) copyOf(b []byte) *captured.Chunk {
	if c.slab == nil || c.slab.Room() < len(b) {
		c.slab.Drop()
		c.slab = c.arena.NewSlab()
	}
	return c.slab.Part(b)
}

// finish ends capture for this direction: the end of the stream (with what was lost since
// the last queued chunk) is delivered with a send bounded by done (copying is over, so
// waiting here holds up nothing but acptap's exit). It returns what could not be delivered
// (the bytes lost, and whether a line was open), or nil. No item is sent after finish.
func (c *capture) finish(done <-chan struct{}) *captured.Lost {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer func() { c.slab.Drop(); c.slab = nil }() // nothing is copied any more
	if c.closed || c.q == nil {
		c.closed = true
		return nil
	}
	now := time.Now()
	if !c.ended {
		c.eof(now)
	}
	c.closed = true
	if !c.pending() {
		return nil
	}
	l := c.lost
	select {
	case c.q <- captured.Item{Dir: c.dir, At: now, Chunk: &captured.Chunk{Lost: l, EOF: true}}:
		c.lost, c.endSent = captured.Lost{}, true
		ring(c.bell)
		return nil
	case <-done:
	}
	return &l
}
