package captured

import (
	"os"
	"sync"
	"unsafe"
)

// An Arena holds the tee's read buffers (BufferSize slots) in one memory file instead of
// the Go heap, so that what is queued for capture at the agent's exit can be handed to the
// finisher without a copy: the finisher inherits the file (File), and the spool only says
// which slots hold which chunks (WriteSpool). It also keeps a burst's backlog out of the
// garbage-collected heap, and gives its memory back to the system once the queue drains
// (a free slot beyond keepWarm is punched out of the file).
//
// Slots are taken as read buffers (Buffer) and as slabs for short reads (Slab). When every
// slot is in use, Buffer and Slab fall back to the heap pool: nothing fails, those chunks
// are only copied into the spool. A nil *Arena is the heap pool alone (not Linux, or no
// memory file could be made).
type Arena struct {
	f     *os.File
	mem   []byte
	punch func(off, n int64) error

	mu    sync.Mutex
	warm  []int32  // free slots whose pages are resident (most recently freed last)
	cold  []int32  // free slots without pages (never used, or punched)
	slots []*Chunk // the chunk of each slot, made on its first use
}

// ArenaSlack is what an arena holds beyond its queue's byte bound: the copiers' read
// buffers in hand, partly filled slabs, and chunks a splitter holds for a long line.
const ArenaSlack = 16 * BufferSize

// NewQueueArena is NewArena for a queue bounded at queueBytes (0: DefaultQueueBytes).
func NewQueueArena(queueBytes int64) (*Arena, error) {
	if queueBytes <= 0 {
		queueBytes = DefaultQueueBytes
	}
	return NewArena(queueBytes + ArenaSlack)
}

// keepWarm is how many free slots keep their pages: enough for a steady flow to read and
// capture without a system call per buffer, little memory.
const keepWarm = 32

// NewArena makes an arena of at least size bytes (whole slots). It errors where memory
// files are not available; callers then use a nil *Arena (the heap pool).
func NewArena(size int64) (*Arena, error) {
	n := (size + BufferSize - 1) / BufferSize
	n = max(n, 1)
	f, mem, punch, err := mapArena(n * BufferSize)
	if err != nil {
		return nil, err
	}
	a := &Arena{f: f, mem: mem, punch: punch, slots: make([]*Chunk, n), cold: make([]int32, n)}
	for i := range a.cold {
		a.cold[i] = int32(n - 1 - int64(i)) // slot 0 first
	}
	return a, nil
}

// File is the arena's memory file, for a finisher to inherit (nil for a nil arena).
func (a *Arena) File() *os.File {
	if a == nil {
		return nil
	}
	return a.f
}

// Buffer returns a chunk whose buffer the copier reads into (see the package function
// Buffer): a free slot of the arena, else a buffer of the heap pool.
func (a *Arena) Buffer() *Chunk {
	if c := a.take(); c != nil {
		c.refs.Store(1)
		return c
	}
	return Buffer()
}

// take returns the chunk of a free slot, preferring one whose pages are resident; nil when
// none is free.
func (a *Arena) take() *Chunk {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var s int32
	cold := false
	switch {
	case len(a.warm) > 0:
		s, a.warm = a.warm[len(a.warm)-1], a.warm[:len(a.warm)-1]
	case len(a.cold) > 0:
		s, a.cold, cold = a.cold[len(a.cold)-1], a.cold[:len(a.cold)-1], true
	default:
		return nil
	}
	c := a.slots[s]
	if c == nil {
		off := int(s) * BufferSize
		c = &Chunk{buf: a.mem[off : off+BufferSize : off+BufferSize], arena: a, slot: s}
		a.slots[s] = c
	}
	c.cold = cold
	return c
}

// put takes back the slot of a chunk no one holds any more.
func (a *Arena) put(c *Chunk) {
	a.mu.Lock()
	if len(a.warm) < keepWarm {
		a.warm = append(a.warm, c.slot)
		a.mu.Unlock()
		return
	}
	a.mu.Unlock()
	// Past keepWarm the slot's pages go back to the system (a queue that drained after a
	// burst leaves no resident backlog). Failing that, the slot stays warm.
	cold := a.punch(int64(c.slot)*BufferSize, BufferSize) == nil
	a.mu.Lock()
	if cold {
		a.cold = append(a.cold, c.slot)
	} else {
		a.warm = append(a.warm, c.slot)
	}
	a.mu.Unlock()
}

// Free is the number of free slots (for tests and the log).
func (a *Arena) Free() int {
	if a == nil {
		return 0
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.warm) + len(a.cold)
}

// Slots is the arena's size in slots.
func (a *Arena) Slots() int {
	if a == nil {
		return 0
	}
	return len(a.slots)
}

// slotOf returns where c's Data lies in the arena: its slot and its offset there; ok false
// when it does not lie in a (heap chunks, or a's nil).
func (a *Arena) slotOf(c *Chunk) (slot int32, off int, ok bool) {
	o := c.owner()
	if a == nil || o.arena != a || len(c.Data) == 0 {
		return 0, 0, false
	}
	base := int(o.slot) * BufferSize
	start := int(uintptrOf(c.Data) - uintptrOf(a.mem[base:]))
	if start < 0 || start+len(c.Data) > BufferSize {
		return 0, 0, false
	}
	return o.slot, start, true
}

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
