package tee

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/acptap/acptap/host/captured"
)

// bufSize is the read size of each direction; one read is forwarded as one write.
const bufSize = captured.BufferSize

// errWrite marks copyLines' error when the destination failed.
var errWrite = errors.New("write")

// yieldEvery is how long a copier forwards chunks at most before it passes once through the
// Go scheduler (yield), after a write. A copier waits for its next chunk in read(2) itself
// (a blocking pipe, or the inherited stdin) and returns to its P without being scheduled, so
// a copier that forwards a line every few milliseconds keeps its P on one scheduling tick;
// after 10 ms of that the runtime's sysmon takes it for a long-running goroutine and retakes
// the P from the read, which resets sysmon to its 20 µs naps for the next 25 ms or so (some
// 60 wake-ups of its thread, on the cores the editor's lines need: docs/benchmarks-history.md,
// fifteenth round, rtp99). Yielding within half that keeps the tick moving; it costs the
// copier one pass through the scheduler, after its write, and at most the wake of an idle
// thread.
var yieldEvery = 5 * time.Millisecond

// yield is runtime.Gosched (tests count the calls).
var yield = runtime.Gosched

// copyLines forwards src to dst chunk by chunk and hands each chunk to c.
// Each chunk is written as soon as Read returns it (a partial line is not held back). Just
// before the write, the chunk is put on the capture queue, which never blocks: so a line is
// always queued for capture before the peer can have seen it, and the wire log's order is
// causal (a reply is never logged before the request it answers, even though the two
// directions are copied by different goroutines). A long read is queued as the read buffer
// itself, not a copy: the receiver and this write share it, and the copier reads the next
// chunk into another buffer. The receipt time is taken right after Read returns. c.mu is held
// across the queueing and the write, so when finish takes it, every chunk that was forwarded
// has also been queued or counted as lost.
func copyLines(dst io.Writer, src io.Reader, c *capture) error {
	ch := c.arena.Buffer()
	defer func() { ch.WriteDone() }() // the buffer in hand goes back (an arena slot)
	var own []byte                    // read buffer for a cold chunk (see captured.Chunk.Cold)
	yielded := time.Now()
	for {
		rb := ch.Buf()
		if ch.Cold() {
			if own == nil {
				own = make([]byte, bufSize)
			}
			rb = own
		}
		n, rerr := src.Read(rb)
		if n > 0 {
			at := time.Now()
			c.mu.Lock()
			handed := c.feed(ch, rb[:n], at)
			_, werr := dst.Write(rb[:n])
			c.settle()
			c.ringAfterWrite()
			c.mu.Unlock()
			if handed {
				ch.WriteDone()
				ch = c.arena.Buffer()
			}
			if werr != nil {
				return fmt.Errorf("%w: %w", errWrite, werr)
			}
			if at.Sub(yielded) >= yieldEvery {
				yield()
				yielded = at
			}
		}
		if rerr != nil {
			c.mu.Lock()
			c.eof(time.Now())
			c.mu.Unlock()
			if errors.Is(rerr, io.EOF) {
				return nil
			}
			return fmt.Errorf("read: %w", rerr)
		}
	}
}
