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
	// mem, when set, is the whole input, no longer than max (so no line is
	// too long): its lines are sub-slices of it, not copies (newMemLines).
	mem []byte
	pos int
}

func newLineReader(r io.Reader, max int) *lineReader {
	lr := jsonl.NewReader(r, max)
	lr.SkipLong, lr.TrimCR = true, true
	return &lineReader{lr: lr, max: max}
}

// newMemLines reads the lines of data, the whole of a decompressed input
// of at most max bytes, by jsonl's rules as newLineReader does (a CR
// before the LF dropped, a final line without LF a line): none can be
// longer than max.
func newMemLines(data []byte, max int) *lineReader {
	return &lineReader{mem: data, max: max}
}

// next returns the next line without its LF (and without a CR before it),
// whether it was longer than max (then line is nil), and its length
// without the LF. The line's number is l.line. It returns io.EOF at the
// end; a final line without LF is returned like the others.
func (l *lineReader) next() (line []byte, n int, tooLong bool, err error) {
	if l.eof {
		return nil, 0, false, io.EOF
	}
	if l.mem != nil {
		return l.nextMem()
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

// nextMem is next for a lineReader over mem: each line is capped at its
// end, so that an append to it cannot write over the next one.
func (l *lineReader) nextMem() (line []byte, n int, tooLong bool, err error) {
	rest := l.mem[l.pos:]
	if len(rest) == 0 {
		l.eof = true
		return nil, 0, false, io.EOF
	}
	i := bytes.IndexByte(rest, '\n')
	if i < 0 {
		l.eof = true // a final line without LF
		i = len(rest)
		l.pos = len(l.mem)
	} else {
		l.pos += i + 1
	}
	l.line++
	b := bytes.TrimSuffix(rest[:i:i], []byte{'\r'})
	return b, len(b), false, nil
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
