package tee

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// bufSize is the read size of each direction; one read is forwarded as one write.
const bufSize = 64 << 10

// copyLines forwards src to dst chunk by chunk and hands the forwarded bytes to c.
// Forward first, copy second: each chunk is written as soon as Read returns it (a partial line
// is not held back), and only then scanned for lines. The receipt time is taken right after
// Read returns. c.mu is held across the write and the scan, so when finish takes it, every
// chunk that was forwarded has also been scanned.
func copyLines(dst io.Writer, src io.Reader, c *capture) error {
	buf := make([]byte, bufSize)
	for {
		n, rerr := src.Read(buf)
		if n > 0 {
			at := time.Now()
			c.mu.Lock()
			_, werr := dst.Write(buf[:n])
			if werr == nil {
				c.feed(buf[:n], at)
			}
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
