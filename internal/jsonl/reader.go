package jsonl

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxLine bounds a line when a Reader is given none: 512 MiB, the
// largest bound any acptap file has (an ASR stream's, twice the longest
// line the recorder captures for the escaping a record adds).
const DefaultMaxLine = 512 << 20

// ErrLineTooLong is wrapped by the error of a line longer than the bound
// (a *LineTooLongError).
var ErrLineTooLong = errors.New("line too long")

// LineTooLongError is a line over the bound.
type LineTooLongError struct {
	// Line is the line's number, from 1.
	Line int
	// Max is the bound.
	Max int
	// Len is the line's length without its LF when the Reader skipped it
	// (Reader.SkipLong; a CR before the LF counted), else 0: reading
	// stopped at the bound.
	Len int64
}

func (e *LineTooLongError) Error() string {
	return fmt.Sprintf("line %d: %v: more than %d bytes", e.Line, ErrLineTooLong, e.Max)
}

func (e *LineTooLongError) Unwrap() error { return ErrLineTooLong }

// bufSize is the read buffer: a line that fits is returned without a copy.
const bufSize = 64 << 10

// blockSize is the largest block a long line is gathered in, and the one
// block a Reader keeps between lines.
const blockSize = 1 << 20

// Reader reads committed lines. It is not safe for concurrent use.
type Reader struct {
	// MaxLine bounds a line, its LF (and with TrimCR a CR before it)
	// excluded; 0 or less: DefaultMaxLine. It may change between calls (a
	// header line has a smaller bound than the entries after it).
	MaxLine int
	// SkipLong makes a line over the bound an error for that line only:
	// the Reader consumes it to its LF without keeping it and the next
	// call reads on. Without it the error ends the reading (Next returns
	// it again), as for a file that cannot be trusted past that point.
	SkipLong bool
	// TrimCR drops a CR before the LF (a CRLF file from elsewhere). The
	// store writes none; its readers leave it, which JSON reads as space.
	TrimCR bool
	// Owned makes every line Next returns the caller's: copied when it
	// would alias the Reader's buffers, a long line's joined blocks as
	// they are (no second copy of a line of hundreds of MiB).
	Owned bool

	br      *bufio.Reader
	spare   []byte // the first block of a long line, reused
	tail    []byte
	tailLen int64
	line    int
	off     int64
	err     error // sticky: the end, a bound, a read error
}

// NewReader reads lines from r with the bound maxLine (see MaxLine).
func NewReader(r io.Reader, maxLine int) *Reader {
	return &Reader{MaxLine: maxLine, br: bufio.NewReaderSize(r, bufSize)}
}

// Next returns the next committed line without its LF. The slice is valid
// until the next call (Clone it to keep it). At the end Next returns
// io.EOF, and Tail holds the bytes after the last LF, if any. A line over
// the bound gives a *LineTooLongError; a read error is returned wrapped,
// with the number of the line it cut. Both, and io.EOF, are returned again
// by every later call (a skipped long line excepted, see SkipLong).
func (r *Reader) Next() ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	limit := r.MaxLine
	if limit <= 0 {
		limit = DefaultMaxLine
	}
	slack := 0 // bytes allowed over the bound until the line's end shows
	if r.TrimCR {
		slack = 1
	}
	// A long line is gathered in blocks and joined once complete: an
	// endless line costs its bound, not the bound and its last copy on
	// growth.
	var blocks [][]byte
	var cur []byte
	var n int64 // bytes of the line so far, LF included
	skipping := false
	spare := false // cur is r.spare
	for {
		chunk, err := r.br.ReadSlice('\n')
		m := n + int64(len(chunk))
		if err == nil {
			m-- // the LF
		}
		if !skipping && m > int64(limit+slack) {
			if !r.SkipLong {
				r.err = &LineTooLongError{Line: r.line + 1, Max: limit}
				return nil, r.err
			}
			skipping, blocks, cur = true, nil, nil
		}
		if err == nil && n == 0 && !skipping { // the usual line, in one piece
			return r.commit(chunk, limit, false)
		}
		n += int64(len(chunk))
		if !skipping {
			if len(cur)+len(chunk) > cap(cur) && len(cur) > 0 {
				blocks = append(blocks, cur)
				cur = nil
			}
			if cur == nil {
				want := max(len(chunk), min(blockSize, limit+1))
				if len(blocks) == 0 && cap(r.spare) >= want {
					cur, spare = r.spare[:0], true
				} else {
					cur, spare = make([]byte, 0, want), false
					if len(blocks) == 0 && want <= blockSize {
						r.spare, spare = cur, true
					}
				}
			}
			cur = append(cur, chunk...)
		}
		switch {
		case err == nil:
			if skipping {
				r.line++
				r.off += n
				return nil, &LineTooLongError{Line: r.line, Max: limit, Len: n - 1}
			}
			return r.commit(join(blocks, cur, int(n)), limit, len(blocks) > 0 || !spare)
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if n > 0 && !skipping {
				r.tail = bytes.Clone(join(blocks, cur, int(n)))
			}
			r.tailLen = n
			r.err = io.EOF
			return nil, r.err
		default:
			r.err = fmt.Errorf("line %d: read: %w", r.line+1, err)
			return nil, r.err
		}
	}
}

// commit counts a complete line (LF included) and returns it without its
// LF (and CR, with TrimCR), or the bound's error when only the CR let it
// through. fresh says b is a slice the Reader does not reuse.
func (r *Reader) commit(b []byte, limit int, fresh bool) ([]byte, error) {
	r.line++
	r.off += int64(len(b))
	b = b[:len(b)-1]
	if r.TrimCR {
		b = bytes.TrimSuffix(b, []byte{'\r'})
	}
	if len(b) > limit {
		if r.SkipLong {
			return nil, &LineTooLongError{Line: r.line, Max: limit, Len: int64(len(b))}
		}
		r.err = &LineTooLongError{Line: r.line, Max: limit}
		return nil, r.err
	}
	if r.Owned && !fresh {
		return bytes.Clone(b), nil
	}
	return b, nil
}

// join is the blocks and cur as one slice of n bytes (cur itself when it
// is the only block).
func join(blocks [][]byte, cur []byte, n int) []byte {
	if len(blocks) == 0 {
		return cur
	}
	out := make([]byte, 0, n)
	for _, b := range blocks {
		out = append(out, b...)
	}
	return append(out, cur...)
}

// Tail returns the uncommitted bytes after the last LF once Next has
// returned io.EOF (nil when none).
func (r *Reader) Tail() []byte { return r.tail }

// TailLen is the length of the bytes after the last LF: len(Tail()), or,
// with SkipLong, the length of a tail over the bound, which is not kept.
func (r *Reader) TailLen() int64 { return r.tailLen }

// Line is the number of lines read so far, committed or skipped; after an
// error it is the number of the last line read before it.
func (r *Reader) Line() int { return r.line }

// Offset is how many bytes the lines read so far took, LFs included: where
// the next line starts, counted from where the Reader started.
func (r *Reader) Offset() int64 { return r.off }
