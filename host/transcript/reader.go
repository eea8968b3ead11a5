package transcript

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/acptap/acptap/sdk/asr"
)

// Record is one record as the transcript reads it: its envelope and the
// item it makes on its own (Item.Records empty). Build folds records into
// the view's items; `acptap show` renders each record as it comes.
type Record struct {
	Line       int    // the line of the stream it is on
	Type       string // the record type
	TS         string // ts, or observedAt when there is none
	Supersedes string
	Native     *asr.Native
	Item       Item
}

// Problem is a line the transcript could not read as a record.
type Problem struct {
	Line int
	// NotHeader: line 1 is not a header (it is then read as a record).
	NotHeader bool
	// Type and Seq are set when the envelope was read and the body was not.
	Type string
	Seq  uint64
	Err  error
}

func (p Problem) String() string {
	switch {
	case p.NotHeader:
		return "line 1: not a header"
	case p.Type != "":
		return fmt.Sprintf("line %d: %s record: %s", p.Line, p.Type, oneLine(p.Err))
	}
	return fmt.Sprintf("line %d: %s", p.Line, oneLine(p.Err))
}

// Entry is what Reader.Next returns: exactly one of Header, Record and
// Problem is set. JSON is the line as read (valid until the next call).
type Entry struct {
	Header  *asr.Header
	Record  *Record
	Problem *Problem
	JSON    []byte
}

// Reader reads a stream line by line, decoding each record once by the
// decoder its type has in recordTypes.
type Reader struct {
	rd   *asr.Reader
	from uint64
	// a line 1 that is not a header is reported, then read as a record
	again []byte
}

// NewReader reads r; records before seq from are skipped undecoded;
// maxLine bounds a line (0: asr.DefaultMaxLine).
func NewReader(r io.Reader, from uint64, maxLine int) *Reader {
	rd := asr.NewReader(r)
	rd.MaxLine = maxLine
	return &Reader{rd: rd, from: from}
}

// Tail is the size of an uncommitted last line, once Next returned io.EOF.
func (r *Reader) Tail() int { return len(r.rd.Tail()) }

// Next returns the next entry, or io.EOF at the end of the stream; another
// error is a read error (the stream cannot be read on).
func (r *Reader) Next() (Entry, error) {
	for {
		line := r.again
		r.again = nil
		if line == nil {
			var err error
			if line, err = r.rd.Next(); err != nil {
				return Entry{}, err
			}
			if r.rd.Line() == 1 {
				if h, err := asr.ReadHeader(line); err == nil {
					return Entry{Header: &h, JSON: line}, nil
				}
				r.again = line
				return Entry{Problem: &Problem{Line: 1, NotHeader: true}, JSON: line}, nil
			}
		}
		n := r.rd.Line()
		g, err := asr.ReadRecord(line)
		if err != nil {
			return Entry{Problem: &Problem{Line: n, Err: err}, JSON: line}, nil
		}
		if g.Seq < r.from {
			continue
		}
		rec, err := decode(g, n)
		if err != nil {
			return Entry{Problem: &Problem{Line: n, Type: g.Type, Seq: g.Seq, Err: err}, JSON: line}, nil
		}
		return Entry{Record: rec, JSON: line}, nil
	}
}

// DeclaredLosses reads the loss categories declarations add, each with the
// id of the declaration that added it first (a first pass, so a reader
// can list every loss before the records).
func DeclaredLosses(r io.Reader, maxLine int) map[string]string {
	out := map[string]string{}
	rd := asr.NewReader(r)
	rd.MaxLine = maxLine
	for {
		line, err := rd.Next()
		if err != nil {
			return out
		}
		if !strings.Contains(string(line), `"declaration"`) {
			continue
		}
		var d asr.Declaration
		if json.Unmarshal(line, &d) != nil || d.Type != asr.TypeDeclaration {
			continue
		}
		for _, c := range d.Lossy {
			if _, ok := out[c]; !ok {
				out[c] = d.ID
			}
		}
	}
}
