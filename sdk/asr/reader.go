package asr

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ErrNotHeader is returned when a stream's first line is not a header.
var ErrNotHeader = errors.New("asr: first line is not a header")

// DefaultMaxLine bounds one line a Reader returns (Reader.MaxLine 0): twice
// the longest line the recorder captures (256 MiB), for the escaping a
// record adds to the text it carries. A longer line is an error, so an
// endless input without LF (/dev/zero, a pipe) cannot take all memory.
const DefaultMaxLine = 512 << 20

// ErrLineTooLong is wrapped by the error Next returns for a line longer
// than the Reader's bound; the Reader returns it again on every later call.
var ErrLineTooLong = errors.New("line too long")

// Reader reads a stream line by line. LF is the commit mark: a final line
// without LF is an uncommitted tail, which Next does not return; Tail
// reports it once Next has returned io.EOF.
type Reader struct {
	// MaxLine bounds a line, LF excluded (0: DefaultMaxLine).
	MaxLine int

	r    *bufio.Reader
	tail []byte
	line int
	err  error // sticky: a line too long
}

// NewReader reads the stream from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 64*1024)}
}

// Next returns the next committed line without its LF (the slice is the
// caller's), or io.EOF at the end. A line longer than MaxLine gives an
// error wrapping ErrLineTooLong that names its line number; reading stops
// there.
func (r *Reader) Next() ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	limit := r.MaxLine
	if limit <= 0 {
		limit = DefaultMaxLine
	}
	// A line is gathered in blocks and joined once complete: an endless
	// line costs its bound, not the bound and its last copy on growth.
	var blocks [][]byte
	var cur []byte
	n := 0
	for {
		chunk, err := r.r.ReadSlice('\n')
		m := n + len(chunk)
		if err == nil {
			m-- // the LF
		}
		if m > limit {
			r.err = fmt.Errorf("asr: line %d: %w: more than %d bytes", r.line+1, ErrLineTooLong, limit)
			return nil, r.err
		}
		if err == nil && n == 0 { // the usual line, in one piece
			r.line++
			return bytes.Clone(chunk[:len(chunk)-1]), nil
		}
		if len(cur)+len(chunk) > cap(cur) && len(cur) > 0 {
			blocks = append(blocks, cur)
			cur = nil
		}
		if cur == nil {
			cur = make([]byte, 0, max(len(chunk), min(1<<20, limit+1)))
		}
		cur = append(cur, chunk...)
		n += len(chunk)
		switch {
		case err == nil:
			r.line++
			b := join(blocks, cur, n)
			return b[:len(b)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if n > 0 {
				r.tail = join(blocks, cur, n)
			}
			return nil, io.EOF
		default:
			return nil, fmt.Errorf("asr: read line %d: %w", r.line+1, err)
		}
	}
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

// Tail returns the uncommitted bytes after the last LF (nil when none).
func (r *Reader) Tail() []byte { return r.tail }

// Line is the number of committed lines read so far.
func (r *Reader) Line() int { return r.line }

// ReadHeader decodes a header line.
func ReadHeader(line []byte) (Header, error) {
	var h Header
	if err := json.Unmarshal(line, &h); err != nil {
		return Header{}, fmt.Errorf("asr: header: %w", err)
	}
	if h.Type != "header" {
		return Header{}, ErrNotHeader
	}
	return h, nil
}

// Generic is a record read without knowing its body type: the envelope,
// the provenance, and the line itself.
type Generic struct {
	Envelope
	Provenance
	Line []byte `json:"-"`
}

// ReadRecord decodes a record line's envelope and provenance.
func ReadRecord(line []byte) (Generic, error) {
	var g Generic
	if err := json.Unmarshal(line, &g); err != nil {
		return Generic{}, fmt.Errorf("asr: record: %w", err)
	}
	if g.Type == "" || g.Type == "header" {
		return Generic{}, fmt.Errorf("asr: record: bad type %q", g.Type)
	}
	g.Line = bytes.Clone(line)
	return g, nil
}
