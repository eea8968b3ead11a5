package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/acptap/acptap/internal/jsonl"
	"github.com/acptap/acptap/sdk"
)

// Bounds on the lines a Reader reads, so an endless input without LF
// (/dev/zero, a pipe) is an error at a line number, not all of memory.
const (
	// DefaultMaxLine bounds an entry line (Reader.MaxLine 0): the longest
	// line a Writer makes for the longest frame the recorder captures
	// (captured.DefaultMaxLine, 256 MiB), which is base64 when escaping would
	// make it longer (see appendEntry), with room to spare.
	DefaultMaxLine = 384 << 20
	// maxHeaderLine bounds the header line: a connection ID, an argv and
	// a source.
	maxHeaderLine = 1 << 20
)

// ErrLineTooLong is wrapped by the error of a line longer than the bound.
var ErrLineTooLong = jsonl.ErrLineTooLong

// Reader streams the entries of a wire log, one line in memory at a time.
type Reader struct {
	// MaxLine bounds an entry line, LF excluded (0: DefaultMaxLine).
	MaxLine int

	f      *os.File
	lr     *jsonl.Reader
	hdr    Header
	lineNo int
	seq    uint64
	done   bool
	rev    *Revision // the last revision entry read
	slab   lineSlab  // decoded frame lines (fastDecodeFrame)
	raw    []byte    // the line of the entry Next returned last
	// OpenRange: the lines before the range (line numbers count on from
	// them), and whether the first entry's seq is taken as it is
	lineBase int
	seqFree  bool
}

// OpenRange opens the wire log at path, reads its header as Open does,
// and reads the entry lines in the bytes [from, to) of the file only: from
// 0 is right after the header, to 0 the end of the file; both must be
// where a line starts. A reader of a range that starts later takes the
// seq of its first entry as it is (the check that seq is dense starts
// there) and numbers its lines from the header's, as if the range
// followed it (a scan in parts, which reads each part's problems only to
// know there were some).
func OpenRange(path string, from, to int64) (*Reader, error) {
	r, err := Open(path)
	if err != nil {
		return nil, err
	}
	hdrEnd := r.lr.Offset()
	start := max(from, hdrEnd)
	end := to
	if end <= 0 {
		fi, err := r.f.Stat()
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("open wire log %s: %w", path, err)
		}
		end = fi.Size()
	}
	if end < start {
		end = start
	}
	r.lr = jsonl.NewReader(io.NewSectionReader(r.f, start, end-start), maxHeaderLine)
	r.lineBase = 1
	r.seqFree = from > hdrEnd
	return r, nil
}

// seqOK says whether seq may follow the last entry read (taking it, for
// the first entry of a later range).
func (r *Reader) seqOK(seq uint64) bool {
	if r.seqFree {
		r.seqFree = false
		r.seq = seq - 1
	}
	return seq == r.seq+1
}

// Raw returns the line (without its LF) of the entry Next returned last,
// as it is in the file; valid until the next call.
func (r *Reader) Raw() []byte { return r.raw }

// Revision returns the last revision entry Next passed over.
func (r *Reader) Revision() (Revision, bool) {
	if r.rev == nil {
		return Revision{}, false
	}
	return *r.rev, true
}

// ReuseLines makes the frame lines Next returns share one buffer: a line
// is valid only until the next call (for a reader that looks at each line
// once, e.g. a scan; it allocates nothing per line).
func (r *Reader) ReuseLines() { r.slab.reuse = true }

// Open opens the wire log at path and reads its header line.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open wire log: %w", err)
	}
	r := &Reader{f: f, lr: jsonl.NewReader(f, maxHeaderLine)}
	if err := r.readHeader(); err != nil {
		f.Close()
		return nil, fmt.Errorf("open wire log %s: %w", path, err)
	}
	return r, nil
}

// Header returns the header read by Open.
func (r *Reader) Header() Header { return r.hdr }

// Close closes the file.
func (r *Reader) Close() error { return r.f.Close() }

// readLine returns the next LF-terminated line without its LF. It returns
// io.EOF at a clean end and an ErrTornTail error for bytes without a final LF.
// The slice is valid until the next call.
func (r *Reader) readLine() ([]byte, error) {
	r.lr.MaxLine = r.MaxLine
	if r.MaxLine <= 0 {
		r.lr.MaxLine = DefaultMaxLine
	}
	if r.lineBase+r.lr.Line() == 0 {
		r.lr.MaxLine = maxHeaderLine
	}
	line, err := r.lr.Next()
	r.lineNo = r.lineBase + r.lr.Line()
	if errors.Is(err, io.EOF) {
		if tail := r.lr.Tail(); len(tail) > 0 {
			return nil, fmt.Errorf("line %d: %w (%d bytes)", r.lineNo+1, ErrTornTail, len(tail))
		}
		return nil, io.EOF
	}
	return line, err
}

func (r *Reader) readHeader() error {
	line, err := r.readLine()
	if errors.Is(err, io.EOF) {
		return errors.New("no header line")
	}
	if err != nil {
		return fmt.Errorf("header: %w", err)
	}
	r.hdr, err = ParseHeader(line)
	return err
}

// ParseHeader decodes a wire log's header line (without its LF).
func ParseHeader(line []byte) (Header, error) {
	var h headerJSON
	if err := json.Unmarshal(line, &h); err != nil {
		return Header{}, fmt.Errorf("header: %w", err)
	}
	if h.Type != "header" || h.Format != Format {
		return Header{}, fmt.Errorf("header: not an %s header (type %q, format %q)", Format, h.Type, h.Format)
	}
	if h.Version != Version {
		return Header{}, fmt.Errorf("header: unsupported version %d (this build reads %d)", h.Version, Version)
	}
	hdr := Header{Connection: h.Connection, Agent: h.Agent, Source: h.Source}
	if h.StartedAt != "" {
		var err error
		if hdr.StartedAt, err = time.Parse(time.RFC3339Nano, h.StartedAt); err != nil {
			return Header{}, fmt.Errorf("header: startedAt: %w", err)
		}
	}
	return hdr, nil
}

// ParseEntry decodes one entry line after the header (without its LF). It
// checks the entry's own fields, not its place in the file: a Reader also
// requires seq to be dense.
func ParseEntry(line []byte) (Entry, error) { return decodeEntry(line) }

// Next returns the next entry, io.EOF after the last one, or an error
// wrapping ErrTornTail when the file ends in an uncommitted line (after
// which Next returns io.EOF). Entries must be dense in seq.
func (r *Reader) Next() (Entry, error) {
	if r.done {
		return Entry{}, io.EOF
	}
	line, err := r.readLine()
	if err != nil {
		r.done = true
		return Entry{}, err
	}
	r.raw = line
	if e, ok := fastDecodeFrame(line, &r.slab); ok {
		if !r.seqOK(e.Seq) {
			return Entry{}, &SeqError{Line: r.lineNo, Entry: e, Want: r.seq + 1}
		}
		r.seq = e.Seq
		return e, nil
	}
	for bytes.Contains(line, []byte(`"revision"`)) && isRevision(line) {
		rev, err := parseRevision(line)
		if err != nil {
			return Entry{}, fmt.Errorf("wire log line %d: revision: %w", r.lineNo, err)
		}
		r.rev = &rev
		if line, err = r.readLine(); err != nil {
			r.done = true
			return Entry{}, err
		}
		r.raw = line
	}
	e, err := decodeEntry(line)
	if err != nil {
		return Entry{}, &LineError{Line: r.lineNo, Bytes: len(line), Dir: guessDir(line), Err: err}
	}
	if !r.seqOK(e.Seq) {
		return Entry{}, &SeqError{Line: r.lineNo, Entry: e, Want: r.seq + 1}
	}
	r.seq = e.Seq
	return e, nil
}

func decodeEntry(line []byte) (Entry, error) {
	if e, ok := fastDecodeFrame(line, nil); ok {
		return e, nil
	}
	return decodeEntryJSON(line)
}

// decodeEntryJSON is decodeEntry by encoding/json: every line the fast
// path does not take.
func decodeEntryJSON(line []byte) (Entry, error) {
	var j entryJSON
	if err := json.Unmarshal(line, &j); err != nil {
		return Entry{}, err
	}
	if j.Type == TypeRevision {
		rev, err := parseRevision(line)
		return Entry{Type: TypeRevision, Revision: rev}, err
	}
	e := Entry{Type: j.Type, Seq: j.Seq, NoLF: j.NoLF}
	var ok bool
	if e.Dir, ok = sdk.ParseDirection(j.Dir); !ok {
		return Entry{}, fmt.Errorf("invalid dir %q", j.Dir)
	}
	if j.At != "" {
		t, err := time.Parse(time.RFC3339Nano, j.At)
		if err != nil {
			return Entry{}, fmt.Errorf("at: %w", err)
		}
		e.At = t
	}
	switch j.Type {
	case TypeFrame:
		switch {
		case j.Line != nil && j.B64 != nil:
			return Entry{}, errors.New("frame has both line and b64")
		case j.Line != nil:
			e.Line = []byte(*j.Line)
		case j.B64 != nil:
			e.Line = *j.B64
		default:
			return Entry{}, errors.New("frame has neither line nor b64")
		}
		if e.Line == nil {
			e.Line = []byte{}
		}
	case TypeGap:
		e.Gap = sdk.Gap{Frames: j.Frames, Bytes: j.Bytes, Reason: j.Reason}
	case TypeSession:
		if j.SessionID == "" && !bytes.Contains(line, []byte(`"sessionId":""`)) {
			return Entry{}, errors.New("session entry has no sessionId")
		}
		e.Session = Session{ID: j.SessionID, Connections: j.Connections, PriorLines: j.PriorLines, PluginLines: j.PluginLines, AEPLines: j.AEPLines, Concurrent: j.Concurrent}
	default:
		return Entry{}, fmt.Errorf("unknown entry type %q", j.Type)
	}
	return e, nil
}
