package captured

import (
	"sync"
	"sync/atomic"
)

// BufferSize is the size of a pooled read buffer: the tee reads each direction this much at
// a time, and one read is forwarded as one write.
const BufferSize = 64 << 10

// DefaultQueueBytes bounds the bytes of the chunks waiting for capture (both
// directions together), so the host's memory is bounded whatever the line
// length; tee.queue_bytes sets it (host/config), and it is at least one
// read (BufferSize). On Linux it is 256 MiB, which holds a 128 MiB burst in
// each direction whatever capture gets of the CPU meanwhile: there the queue
// lives in an Arena, costs memory only while a burst fills it, gives it back
// once drained, and goes to the finisher at the exit without a copy.
// Elsewhere the queue is Go heap and the exit writes it out first, so it
// stays at 64 MiB.
const DefaultQueueBytes = defaultQueueBytes

// Chunk is one read of one direction, handed to capture as it was forwarded. The receiver
// splits it into lines (see Splitter) and calls Release exactly once when it no longer needs
// Data; Data must not be written to.
type Chunk struct {
	// Lost are bytes of this direction that were forwarded before Data but not handed to
	// capture (the queue was full); the receiver declares the lines they touch as a gap.
	Lost Lost
	// Data is the bytes read (nil for a chunk that only carries Lost or EOF).
	Data []byte
	// EOF: the direction ended after Data; a line in progress is the final one (no LF).
	EOF bool

	buf   []byte       // the pooled read buffer Data lies in (nil: Data was copied)
	refs  atomic.Int32 // holders of buf: the copier until its write returned, the receiver, a slab's parts
	size  int64        // what the chunk counts against the byte bound
	bound *Bound

	parent *Chunk // the slab Data was copied into (Slab), which holds the bytes
	arena  *Arena // buf is a slot of arena (nil: of the heap pool)
	slot   int32
	cold   bool // buf is an arena slot without pages yet (see Cold)

	// The copier's tally of Data (Tally): its LFs and whether it ends with one.
	tallied, tallyLF bool
	tallyLFs         uint32
}

// Tally records Data's LFs and last byte, counted by the copier after its write, while the
// bytes are still in its cache: a chunk stored through the arena's file (Store of a cold
// slot) has no pages in this process, and the exit's spool (WriteSpool), which needs every
// queued chunk's LFs for the remainder it declares, would otherwise fault them all in to
// count them (some 17 ms of acptap's exit for 160 MB queued, docs/benchmarks-history.md). The
// copier calls it before WriteDone; the receiver reads it (Tallied) only once the copier is
// done with the queue (it is closed).
func (c *Chunk) Tally(lfs int, endLF bool) {
	c.tallied, c.tallyLF, c.tallyLFs = true, endLF, uint32(lfs)
}

// Tallied is the copier's tally of Data (ok false: none).
func (c *Chunk) Tallied() (lfs uint64, endLF, ok bool) {
	return uint64(c.tallyLFs), c.tallyLF, c.tallied
}

// Lost counts forwarded bytes that capture did not get. EndLF says whether the last of them
// was an LF, i.e. whether the line after them starts fresh.
type Lost struct {
	Bytes, LFs uint64
	EndLF      bool
}

// Release says the receiver is done with the chunk: its bytes leave the queue's byte bound
// and its buffer is recycled once the copier's write has returned too.
func (c *Chunk) Release() {
	c.Uncharge()
	c.unref()
}

// Buffer returns a chunk whose pooled buffer (Buf) the copier reads into; only the copier
// holds it. The copier calls WriteDone once the write of what it read has returned.
func Buffer() *Chunk {
	c := bufPool.Get().(*Chunk)
	c.refs.Store(1)
	return c
}

// Buf is the chunk's read buffer (nil for a chunk whose Data was copied).
func (c *Chunk) Buf() []byte { return c.buf }

// Cold says the chunk's buffer is an arena slot that has no pages yet (never used, or given
// back after a burst). Reading into it would fault each page in, zeroed first, on the copy
// path: in a burst that capture lags, that is most of the tee's CPU. A copier reads such a
// chunk's bytes into a buffer of its own and puts them in with Store, which gives the slot
// its pages without zeroing them (about half the cost, measured in docs/benchmarks-history.md).
func (c *Chunk) Cold() bool { return c.cold }

// Store copies b into the start of the chunk's buffer: through the arena's file when the
// slot is cold, else as a plain copy. b must fit in the buffer.
func (c *Chunk) Store(b []byte) {
	if c.cold {
		c.cold = false
		if _, err := c.arena.f.WriteAt(b, int64(c.slot)*BufferSize); err == nil {
			return
		}
		// Writing the memory file failed (it cannot, short of ENOMEM): copying faults the
		// pages in instead.
	}
	copy(c.buf, b)
}

// Share puts the first n bytes of the buffer in Data for the receiver: the buffer is held
// by the copier and the receiver until both are done (WriteDone, Release).
func (c *Chunk) Share(n int) {
	c.Data = c.buf[:n]
	c.refs.Store(2)
}

// Unshare takes back a shared chunk the queue refused: only the copier holds it again.
func (c *Chunk) Unshare() {
	c.Data, c.Lost, c.bound = nil, Lost{}, nil
	c.refs.Store(1)
}

// WriteDone says the copier no longer needs the buffer (its write returned).
func (c *Chunk) WriteDone() { c.unref() }

// Charge counts size bytes of the chunk against b until Release (or Uncharge).
func (c *Chunk) Charge(b *Bound, size int64) { c.size, c.bound = size, b }

// QueueUse is how full the byte bound the chunk is charged to is, from 0 to 1 (0 for a chunk
// not charged): the receiver's view of how far behind the tee it is.
func (c *Chunk) QueueUse() float64 {
	if c.bound == nil {
		return 0
	}
	return c.bound.Use()
}

// Queue is the byte bound the chunk is charged to (nil: none, e.g. an EOF chunk): the
// receiver keeps it to see, between chunks, how much the tee has queued.
func (c *Chunk) Queue() *Bound { return c.bound }

// Uncharge gives the chunk's bytes back to its bound (the queue refused it, or the receiver
// is done).
func (c *Chunk) Uncharge() {
	if c.bound != nil {
		c.bound.used.Add(-c.size)
		c.bound = nil
	}
}

// owner is the chunk whose buffer holds c's bytes: c, or the slab c was copied into.
func (c *Chunk) owner() *Chunk {
	if c.parent != nil {
		return c.parent
	}
	return c
}

// hold keeps the chunk's buffer from being recycled until a matching unref (a Splitter
// holding a long line's bytes). A copied chunk's bytes live as long as they are referenced.
func (c *Chunk) hold() {
	if o := c.owner(); o.buf != nil {
		o.refs.Add(1)
	}
}

func (c *Chunk) unref() {
	o := c.owner()
	if o.buf == nil {
		return
	}
	if o.refs.Add(-1) == 0 {
		o.Data, o.Lost, o.EOF, o.size = nil, Lost{}, false, 0
		o.tallied, o.tallyLF, o.tallyLFs = false, false, 0
		if o.arena != nil {
			o.arena.put(o)
		} else {
			bufPool.Put(o)
		}
	}
}

// A Slab is a buffer short reads are copied into, one after the other, so that a quiet
// session does not pin a whole read buffer per line: each part (Part) holds the slab until
// it is released, and the copier holds it until it moves on to another (Drop).
type Slab struct {
	c *Chunk
	n int
}

// NewSlab returns a slab of BufferSize bytes from the arena (or the heap pool).
func (a *Arena) NewSlab() *Slab { return &Slab{c: a.Buffer()} }

// Room is how many more bytes the slab takes.
func (s *Slab) Room() int { return len(s.c.buf) - s.n }

// Part copies b (at most Room bytes) into the slab and returns a chunk of it.
func (s *Slab) Part(b []byte) *Chunk {
	d := s.c.buf[s.n : s.n+len(b) : s.n+len(b)]
	copy(d, b)
	s.n += len(b)
	s.c.refs.Add(1)
	return &Chunk{Data: d, parent: s.c}
}

// Drop lets go of the copier's hold; the slab is recycled once its parts are released.
func (s *Slab) Drop() {
	if s != nil && s.c != nil {
		s.c.unref()
		s.c = nil
	}
}

// bufPool recycles read buffers (as their Chunks).
var bufPool = sync.Pool{New: func() any { return &Chunk{buf: make([]byte, BufferSize)} }}

// Bound is the capture queue's bound in bytes, shared by both directions.
type Bound struct {
	limit int64
	used  atomic.Int64
}

// NewBound returns a bound of limit bytes.
func NewBound(limit int64) *Bound { return &Bound{limit: limit} }

// Used is how many bytes are reserved now.
func (b *Bound) Used() int64 { return b.used.Load() }

// Use is Used as a share of the limit, from 0 to 1 (0 without a limit).
func (b *Bound) Use() float64 {
	if b.limit <= 0 {
		return 0
	}
	return float64(b.used.Load()) / float64(b.limit)
}

// Take reserves n bytes; false (nothing reserved) when they do not fit.
func (b *Bound) Take(n int64) bool {
	if b.used.Add(n) > b.limit {
		b.used.Add(-n)
		return false
	}
	return true
}

// Release releases the item's chunk, if it carries one (see Chunk.Release).
func (it Item) Release() {
	if it.Chunk != nil {
		it.Chunk.Release()
	}
}
