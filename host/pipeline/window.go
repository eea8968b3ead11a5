package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/internal/pluginwire"
	"github.com/acptap/acptap/sdk"
)

// The shared window: in a rebuild (Pipeline.Rebuild, which the finisher and
// `acptap rebuild` run) every feeder maps the same wire log from seq 1 to
// the same target, so one reader decodes it once for all of them, in
// blocks of BatchFrames entries — the batches each feeder's own reader
// made before — and each feeder takes the blocks in order through its
// cursor. A block is dropped once every cursor has passed it.
//
// The window is bounded: the reader stops reading ahead while it holds
// windowMaxBlocks blocks or windowMaxBytes of lines (the first block is
// always read, whatever its size), so a slow feeder holds the faster ones
// back to within that much of itself rather than making the host hold the
// log. A feeder that leaves the window (its plugin was restarted and is
// re-fed from seq 1, or gave up) no longer holds it back; a restarted one
// reads the wire log on its own, as every feeder did before.
//
// The reader also builds each block's frames, with a FrameBuilder of its
// own that sees every line in order as each feeder's would: a feeder that
// maps the window from its start takes them instead of building its own
// (the lines' scan for ids is the largest part of building), and a block
// without a session frame to add goes to every plugin as the same encoded
// request (pluginwire.Batch). A block's slices are reused for a later
// block once every feeder is done with it.
var (
	windowMaxBlocks = 16
	windowMaxBytes  = 4 << 20
	// shareWindow off: each feeder reads the wire log itself (tests compare).
	shareWindow = true
)

// window is the decoded wire log shared by a rebuild's feeders.
type window struct {
	path   string
	target uint64 // the last seq to read (the rebuild's first pass saw it)
	batch  int
	// bounds (tests lower them)
	maxBlocks, maxBytes int

	mu      sync.Mutex
	cond    *sync.Cond
	blocks  []*windowBlock // blocks[0] is block number base
	base    int
	bytes   int // line bytes held in blocks
	peak    int // the most blocks held (tests)
	done    bool
	err     error // the read error after the last block (sticky)
	closed  bool  // every cursor left, or ctx ended: the reader stops
	cursors map[*windowCursor]bool
	fb      *pluginwire.FrameBuilder // the blocks' frames (the reader's)
	retired []*windowBlock           // blocks every cursor has passed, oldest first, to reuse
	started bool
	stop    func() bool
	ended   bool // the context ended: the reader stops

	// first, when set, is Rebuild's first pass (firstpass.go): the reader
	// reads to the end of the log (target unknown), calls first with every
	// entry before it is in a block, reports problems to problem, reads on
	// when no cursor is left (keeping no block), and calls last with the
	// last seq and the read error before the window is done.
	first   func(wire.Entry)
	problem func(wire.Problem)
	last    func(seq uint64, err error)
}

type windowBlock struct {
	num     int // its number in the window
	entries []wire.Entry
	bytes   int
	// frames are the entries' frames as a feeder's FrameBuilder builds them
	// (none for a session entry: the feeder adds what it stands for);
	// first[i] is the index of entry i's first, first[len(entries)] is
	// len(frames).
	frames []sdk.Frame
	first  []int32
	once   sync.Once
	batch  *pluginwire.Batch // the frames encoded once for every plugin (shared)
	// pinned: a feeder left the window while mapping it (a call it
	// abandoned may still read it): never reused.
	pinned bool
}

// entryFrames are the frames of the block's entry i.
func (b *windowBlock) entryFrames(i int) []sdk.Frame { return b.frames[b.first[i]:b.first[i+1]] }

// shared is the block's frames as one Batch for every feeder.
func (b *windowBlock) shared() *pluginwire.Batch {
	b.once.Do(func() { b.batch = pluginwire.NewBatch(b.frames) })
	return b.batch
}

// windowCursor is one feeder's place in the window: the next block it takes.
type windowCursor struct {
	w    *window
	next int
	// rel: the feeder is done with the blocks before it (it asked for the
	// next; the block it was given last is in use until then).
	rel int
}

// windowBlocks is the most blocks of batch entries the window holds:
// windowMaxBlocks of the recording's 256-frame batches, in frames, and 4 at
// least (two batches in flight for each of two feeders, and the next
// read): the offline modes' larger batches (OfflineBatchFrames) keep the
// window's frames, not multiply them (the host's peak in a 70 MB rebuild
// was 72 MB with 16 blocks of 1024 frames, 44 MB with 16 of 256).
func windowBlocks(batch int) int {
	if batch <= 256 {
		return windowMaxBlocks
	}
	return max(4, windowMaxBlocks*256/batch)
}

func newWindow(path string, target uint64, batch int) *window {
	w := &window{path: path, target: target, batch: batch, maxBlocks: windowBlocks(batch), maxBytes: windowMaxBytes,
		cursors: map[*windowCursor]bool{}, fb: pluginwire.NewFrameBuilder()}
	w.cond = sync.NewCond(&w.mu)
	return w
}

// join adds a cursor at block 0. Every feeder joins before any of them
// reads (attach creates them all under p.mu, which a feeder's wireTarget
// takes before it first reads), so no block is dropped before it has been
// given to every feeder.
func (w *window) join() *windowCursor {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := &windowCursor{w: w}
	w.cursors[c] = true
	return c
}

// take returns the cursor's next block, waiting for the reader; io.EOF
// after the last, or the read error that ended the window (with the seq it
// was at, as the feeder's own reader said it). The block is shared:
// read-only, and in use until the next take or leave.
func (c *windowCursor) take(ctx context.Context) (*windowBlock, error) {
	w := c.w
	w.mu.Lock()
	defer w.mu.Unlock()
	c.rel = c.next
	if !w.started {
		w.startLocked(ctx, func() { w.read() })
	}
	for {
		if i := c.next - w.base; i < len(w.blocks) {
			b := w.blocks[i]
			c.next++
			w.trim()
			return b, nil
		}
		if w.done {
			if w.err != nil {
				return nil, w.err
			}
			return nil, io.EOF
		}
		if w.closed || ctx.Err() != nil {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			return nil, errors.New("wire log window closed")
		}
		w.cond.Wait()
	}
}

// startLocked starts the reader (run) and stops it when ctx ends. Called
// with mu held.
func (w *window) startLocked(ctx context.Context, run func()) {
	w.started = true
	w.stop = context.AfterFunc(ctx, func() {
		w.mu.Lock()
		w.closed, w.ended = true, true
		w.cond.Broadcast()
		w.mu.Unlock()
	})
	go run()
}

// leave removes the cursor: the window no longer waits for it. The last
// to leave stops the reader.
func (c *windowCursor) leave() {
	w := c.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.cursors[c] {
		return
	}
	if c.rel < c.next { // the block it was given last may still be read
		if i := c.next - 1 - w.base; i >= 0 && i < len(w.blocks) {
			w.blocks[i].pinned = true
		} else {
			for _, b := range w.retired {
				b.pinned = b.pinned || b.num == c.next-1
			}
		}
	}
	delete(w.cursors, c)
	if len(w.cursors) == 0 {
		w.closed = true
		w.blocks, w.bytes = nil, 0
		if w.stop != nil && w.first == nil {
			w.stop() // (a first pass reads on, until its context ends)
		}
	} else {
		w.trim()
	}
	w.cond.Broadcast()
}

// trim drops the blocks every cursor has passed. Called with mu held.
func (w *window) trim() {
	low := -1
	for c := range w.cursors {
		if low < 0 || c.next < low {
			low = c.next
		}
	}
	n := 0
	for n < len(w.blocks) && w.base+n < low {
		w.bytes -= w.blocks[n].bytes
		if !w.blocks[n].pinned && len(w.retired) < w.maxBlocks {
			w.retired = append(w.retired, w.blocks[n])
		}
		w.blocks[n] = nil
		n++
	}
	if n > 0 {
		w.blocks = w.blocks[n:]
		w.base += n
		w.cond.Broadcast() // room for the reader
	}
}

// spare returns a block to fill: a retired one every cursor is done with,
// its slices reused, or a new one. Called with mu held.
func (w *window) spare(num, n int) *windowBlock {
	rel := -1
	for c := range w.cursors {
		if rel < 0 || c.rel < rel {
			rel = c.rel
		}
	}
	for len(w.retired) > 0 && w.retired[0].pinned {
		w.retired = w.retired[1:]
	}
	if len(w.retired) > 0 && w.retired[0].num < rel {
		old := w.retired[0]
		w.retired[0] = nil
		w.retired = w.retired[1:]
		if old.batch != nil {
			old.batch.Release()
		}
		return &windowBlock{num: num, entries: old.entries[:0], frames: old.frames[:0], first: old.first[:0]}
	}
	return &windowBlock{num: num, entries: make([]wire.Entry, 0, n), first: make([]int32, 0, n+1)}
}

// full says whether the reader must wait. Called with mu held.
func (w *window) full() bool {
	return len(w.blocks) > 0 && (len(w.blocks) >= w.maxBlocks || w.bytes >= w.maxBytes)
}

// read is the window's reader: the entries up to target in blocks of
// batch, as each feeder's catch-up read them (a Tolerant reader without a
// problem report: the rebuild's first pass reported them).
func (w *window) read() {
	r, err := wire.Open(w.path)
	var tr *wire.Tolerant
	if err == nil {
		tr = wire.NewTolerant(r, w.problem)
		defer tr.Close()
	} else {
		err = fmt.Errorf("catch up from wire log: %w", err)
	}
	first := w.first != nil
	var seq, last uint64
	eof := false
	num := 0 // the next block's number
	for err == nil && !eof && (first || seq < w.target) {
		n := w.batch
		if !first {
			n = min(n, int(w.target-seq))
		}
		w.mu.Lock()
		for w.full() && !w.closed {
			w.cond.Wait()
		}
		closed, ended := w.closed, w.ended
		blk := w.spare(num, n)
		w.mu.Unlock()
		if ended || closed && !first {
			return
		}
		for (first || seq < w.target) && len(blk.entries) < w.batch {
			e, rerr := tr.Next()
			if first && errors.Is(rerr, io.EOF) {
				eof = true
				break
			}
			if rerr != nil {
				err = fmt.Errorf("read wire log at seq %d: %w", seq+1, rerr)
				break
			}
			if first {
				w.first(e)
				last = e.Seq
			}
			if e.Seq <= seq {
				continue
			}
			blk.first = append(blk.first, int32(len(blk.frames)))
			if !closed && shareFrames {
				// As feeder.build makes them (a session entry's frames are the feeder's).
				switch e.Type {
				case wire.TypeGap:
					blk.frames = w.fb.Gap(blk.frames, e.Seq, e.Dir, e.At, e.Gap)
				case wire.TypeSession:
				default:
					blk.frames = w.fb.Line(blk.frames, e.Seq, e.Dir, e.At, e.Line)
				}
			}
			blk.entries = append(blk.entries, e)
			blk.bytes += len(e.Line)
			seq = e.Seq
		}
		blk.first = append(blk.first, int32(len(blk.frames)))
		if err != nil {
			break // a partial block is not mapped: the feeder gives up after the last whole one
		}
		if len(blk.entries) == 0 {
			continue // the end, on a block's edge
		}
		w.mu.Lock()
		if !w.closed {
			w.blocks = append(w.blocks, blk)
			w.bytes += blk.bytes
			w.peak = max(w.peak, len(w.blocks))
			num++
		}
		w.cond.Broadcast()
		w.mu.Unlock()
	}
	if first {
		w.last(last, err)
	}
	w.mu.Lock()
	w.done, w.err = true, err
	w.cond.Broadcast()
	w.mu.Unlock()
}
