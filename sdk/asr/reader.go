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

// Reader reads a stream line by line. LF is the commit mark: a final line
// without LF is an uncommitted tail, which Next does not return; Tail
// reports it once Next has returned io.EOF.
type Reader struct {
	r    *bufio.Reader
	tail []byte
	line int
}

// NewReader reads the stream from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 64*1024)}
}

// Next returns the next committed line without its LF (the slice is the
// caller's), or io.EOF at the end.
func (r *Reader) Next() ([]byte, error) {
	b, err := r.r.ReadBytes('\n')
	if err == nil {
		r.line++
		return b[:len(b)-1], nil
	}
	if errors.Is(err, io.EOF) {
		if len(b) > 0 {
			r.tail = b
		}
		return nil, io.EOF
	}
	return nil, fmt.Errorf("asr: read line %d: %w", r.line+1, err)
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
