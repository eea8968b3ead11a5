package tee

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// bufSize is the read size of each direction; one read is forwarded as one write.
const bufSize = 64 << 10

// copyLines forwards src to dst chunk by chunk and hands the bytes to c.
// Each chunk is written as soon as Read returns it (a partial line is not held back). Just
// before the write, the chunk's complete lines are copied onto the capture queue, which never
// blocks: so a line is always captured before the peer can have seen it, and the wire log's
// order is causal (a reply is never logged before the request it answers, even though the two
// directions are copied by different goroutines). The receipt time is taken right after Read
// returns. c.mu is held across the scan and the write, so when finish takes it, every chunk
// that was forwarded has also been scanned.
func copyLines(dst io.Writer, src io.Reader, c *capture) error {
	buf := make([]byte, bufSize)
	for {
		n, rerr := src.Read(buf)
		if n > 0 {
			at := time.Now()
			c.mu.Lock()
			c.feed(buf[:n], at)
			_, werr := dst.Write(buf[:n])
			c.mu.Unlock()
			if werr != nil {
				return fmt.Errorf("write: %w", werr)
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
