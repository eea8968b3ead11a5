package tee

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/acptap/acptap/host/captured"
)

// bufSize is the read size of each direction; one read is forwarded as one write.
const bufSize = captured.BufferSize

// errWrite marks copyLines' error when the destination failed.
var errWrite = errors.New("write")

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
