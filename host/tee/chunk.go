package tee

import (
	"sync"
	"sync/atomic"
)

// DefaultQueueBytes bounds the bytes of the chunks waiting for capture (both directions
// together), so the host's memory is bounded whatever the line length.
const DefaultQueueBytes = 16 << 20

// copyBelow: a read shorter than this is copied (into a slab) before it is queued, so a quiet
// session does not pin a whole read buffer per line; a longer read hands the buffer itself.
const copyBelow = 8 << 10

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
	refs  atomic.Int32 // holders of buf: the copier until its write returned, the receiver
	size  int64        // what the chunk counts against the byte bound
	bound *byteBound
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
	if c.bound != nil {
		c.bound.used.Add(-c.size)
		c.bound = nil
	}
	c.unref()
}

// hold keeps the chunk's buffer from being recycled until a matching unref (a Splitter
// holding a long line's bytes). A copied chunk's bytes live as long as they are referenced.
func (c *Chunk) hold() {
	if c.buf != nil {
		c.refs.Add(1)
	}
}

func (c *Chunk) unref() {
	if c.buf == nil {
		return
	}
	if c.refs.Add(-1) == 0 {
		c.Data, c.Lost, c.EOF, c.size = nil, Lost{}, false, 0
		bufPool.Put(c)
	}
}

// bufPool recycles read buffers (as their Chunks).
var bufPool = sync.Pool{New: func() any { return &Chunk{buf: make([]byte, bufSize)} }}

// getBuf returns a chunk whose buffer the copier reads into; only the copier holds it.
func getBuf() *Chunk {
	c := bufPool.Get().(*Chunk)
	c.refs.Store(1)
	return c
}

// byteBound is the queue's bound in bytes, shared by both directions.
type byteBound struct {
	limit int64
	used  atomic.Int64
}

// take reserves n bytes; false (nothing reserved) when they do not fit.
func (b *byteBound) take(n int64) bool {
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
