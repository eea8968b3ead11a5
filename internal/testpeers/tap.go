package testpeers

import (
	"bytes"
	"io"
	"sync"
)

// Tap returns a writer that passes every byte on to w unchanged and calls
// onLine with each complete line (without its newline) before the bytes that
// end it are forwarded. Checking a request in onLine therefore happens before
// the peer reading from w can answer it. Call Flush at EOF for a final
// unterminated line.
func Tap(w io.Writer, onLine func(line []byte)) *LineTap {
	return &LineTap{w: w, onLine: onLine}
}

// LineTap is the writer returned by Tap.
type LineTap struct {
	w      io.Writer
	onLine func([]byte)
	mu     sync.Mutex
	buf    []byte
}

// Write implements io.Writer.
func (t *LineTap) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.buf = append(t.buf, p...)
	for {
		i := bytes.IndexByte(t.buf, '\n')
		if i < 0 {
			break
		}
		line := append([]byte(nil), t.buf[:i]...)
		t.buf = t.buf[i+1:]
		if len(bytes.TrimSpace(line)) > 0 {
			t.onLine(line)
		}
	}
	t.mu.Unlock()
	return t.w.Write(p)
}

// Flush reports a final unterminated line, if any.
func (t *LineTap) Flush() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(bytes.TrimSpace(t.buf)) > 0 {
		t.onLine(append([]byte(nil), t.buf...))
	}
	t.buf = nil
}

// Close flushes and closes w when it is an io.Closer.
func (t *LineTap) Close() error {
	t.Flush()
	if c, ok := t.w.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
