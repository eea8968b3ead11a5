package asr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/acptap/acptap/internal/jsonl"
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
var ErrLineTooLong = jsonl.ErrLineTooLong

// Reader reads a stream line by line. LF is the commit mark: a final line
// without LF is an uncommitted tail, which Next does not return; Tail
// reports it once Next has returned io.EOF.
type Reader struct {
	// MaxLine bounds a line, LF excluded (0: DefaultMaxLine).
	MaxLine int

	r *jsonl.Reader
}

// NewReader reads the stream from r.
func NewReader(r io.Reader) *Reader {
	jr := jsonl.NewReader(r, DefaultMaxLine)
	jr.Owned = true
	return &Reader{r: jr}
}

// Next returns the next committed line without its LF (the slice is the
// caller's), or io.EOF at the end. A line longer than MaxLine gives an
// error wrapping ErrLineTooLong that names its line number; reading stops
// there.
func (r *Reader) Next() ([]byte, error) {
	r.r.MaxLine = r.MaxLine
	if r.MaxLine <= 0 {
		r.r.MaxLine = DefaultMaxLine
	}
	b, err := r.r.Next()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("asr: %w", err)
	}
	return b, nil
}

// Tail returns the uncommitted bytes after the last LF (nil when none).
func (r *Reader) Tail() []byte { return r.r.Tail() }

// Line is the number of committed lines read so far.
func (r *Reader) Line() int { return r.r.Line() }

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
