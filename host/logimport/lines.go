package logimport

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/acptap/acptap/internal/jsonl"
)

// lineReader reads the lines of a log to convert, up to max bytes each,
// numbering them from 1: jsonl's reader, with the rules of a foreign file
// — a CR before the LF is dropped, a longer line is consumed and reported
// without being kept, and a final line without LF is a line (a hand-made
// log need not end in one; the torn-tail rule is the store's).
type lineReader struct {
	lr   *jsonl.Reader
	max  int
	line int
	eof  bool
}

func newLineReader(r io.Reader, max int) *lineReader {
	lr := jsonl.NewReader(r, max)
	lr.SkipLong, lr.TrimCR = true, true
	return &lineReader{lr: lr, max: max}
}

// next returns the next line without its LF (and without a CR before it),
// whether it was longer than max (then line is nil), and its length
// without the LF. The line's number is l.line. It returns io.EOF at the
// end; a final line without LF is returned like the others.
func (l *lineReader) next() (line []byte, n int, tooLong bool, err error) {
	if l.eof {
		return nil, 0, false, io.EOF
	}
	b, err := l.lr.Next()
	var tl *jsonl.LineTooLongError
	switch {
	case err == nil:
		l.line = l.lr.Line()
		return b, len(b), false, nil
	case errors.As(err, &tl):
		l.line = tl.Line
		return nil, int(tl.Len), true, nil
	case errors.Is(err, io.EOF):
		l.eof = true
		if l.lr.TailLen() == 0 {
			return nil, 0, false, io.EOF
		}
		l.line = l.lr.Line() + 1
		tail := l.lr.Tail()
		if tail == nil || len(bytes.TrimSuffix(tail, []byte{'\r'})) > l.max {
			return nil, int(l.lr.TailLen()), true, nil
		}
		return bytes.TrimSuffix(tail, []byte{'\r'}), len(tail), false, nil
	default:
		return nil, 0, false, err
	}
}

// countingReader counts the bytes read through it, for progress.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if c.n != nil {
		c.n.Add(int64(n))
	}
	return n, err
}

// gzipMagic starts every gzip member.
var gzipMagic = []byte{0x1f, 0x8b}

// decompress returns r's content, gunzipped when r starts with the gzip
// magic bytes, and whether it was.
func decompress(r io.Reader) (io.Reader, bool, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, err := br.Peek(2)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, false, err
	}
	if !bytes.Equal(head, gzipMagic) {
		return br, false, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, true, fmt.Errorf("gzip: %w", err)
	}
	return zr, true, nil
}
