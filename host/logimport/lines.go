package logimport

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
)

// lineReader reads LF-terminated lines of any length up to max bytes,
// numbering them from 1. A longer line is consumed without being kept.
type lineReader struct {
	br   *bufio.Reader
	max  int
	buf  []byte
	line int
}

// maxKept caps the line buffer kept between lines, so one huge line does not
// pin its memory for the rest of the file.
const maxKept = 4 << 20

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its LF (and without a CR before it),
// whether it was longer than max (then line is nil), and its length
// without the LF. The line's number is l.line. It returns io.EOF at the end; a final line without LF is
// returned like the others.
func (l *lineReader) next() (line []byte, n int, tooLong bool, err error) {
	if cap(l.buf) > maxKept {
		l.buf = nil
	}
	l.buf = l.buf[:0]
	for {
		chunk, err := l.br.ReadSlice('\n')
		n += len(chunk)
		if !tooLong {
			if len(l.buf)+len(chunk) > l.max+2 { // +2: the CR LF that are not part of the line
				tooLong = true
				l.buf = l.buf[:0]
			} else {
				l.buf = append(l.buf, chunk...)
			}
		}
		switch {
		case err == nil:
			l.line++
			return l.trim(tooLong, n-1)
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if n == 0 {
				return nil, 0, false, io.EOF
			}
			l.line++
			return l.trim(tooLong, n)
		default:
			return nil, 0, false, err
		}
	}
}

func (l *lineReader) trim(tooLong bool, n int) ([]byte, int, bool, error) {
	b := bytes.TrimSuffix(l.buf, []byte{'\n'})
	b = bytes.TrimSuffix(b, []byte{'\r'})
	if tooLong || len(b) > l.max {
		return nil, n, true, nil
	}
	return b, n, false, nil
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
