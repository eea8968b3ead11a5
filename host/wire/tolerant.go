package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/acptap/acptap/sdk"
)

// LineError is an entry line Next could not decode (bad JSON, an unknown
// entry type, a bad field). The line is consumed; the reader can go on.
type LineError struct {
	Line  int
	Bytes int
	Dir   sdk.Direction // best guess from the raw bytes, C2A when none
	Err   error
}

func (e *LineError) Error() string { return fmt.Sprintf("wire log line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// SeqError is an entry whose seq is not the next one. Entry is the decoded
// entry; the reader has not taken its seq.
type SeqError struct {
	Line  int
	Entry Entry
	Want  uint64
}

func (e *SeqError) Error() string {
	return fmt.Sprintf("wire log line %d: seq %d, want %d", e.Line, e.Entry.Seq, e.Want)
}

// guessDir reads a dir member out of a line that did not decode, so the gap
// that stands for it keeps its direction when the line says.
func guessDir(line []byte) sdk.Direction {
	if bytes.Contains(line, []byte(`"dir":"a2c"`)) {
		return sdk.A2C
	}
	return sdk.C2A
}

// Problem is something a Tolerant reader skipped or could not read.
type Problem struct {
	// Line is the wire log line (1 is the header).
	Line int
	// Skipped is true for a line that was not mapped (bad JSON, an unknown
	// entry type, a seq already seen); Missing counts the entries absent
	// before Line (a seq gap), each mapped as a gap; Torn marks bytes after
	// the last LF (an interrupted write, which a reader never maps).
	Skipped bool
	Missing uint64
	Torn    bool
	Bytes   int
	Reason  string
}

// ReasonUnreadable is the reason of the gap entries a Tolerant reader puts
// where entries could not be read.
const ReasonUnreadable = "wire log entry unreadable or missing"

// Tolerant reads a wire log past bad lines: it reports each (Problem) and
// keeps seq dense by standing a gap entry (one frame, ReasonUnreadable) in
// for every entry that is missing, so a mapper declares the loss where it
// happened and maps what follows. Its Next never returns a LineError or a
// SeqError.
type Tolerant struct {
	r       *Reader
	report  func(Problem)
	pending []Entry
	skipped []*LineError // bad lines since the last good entry
	// The time and direction of the last entry returned, what standIn
	// takes of it (not the whole Entry: copied for every entry).
	lastAt  time.Time
	lastDir sdk.Direction
	lost    uint64
	ended   bool
}

// NewTolerant wraps r; report (nil: none) is called once per problem.
func NewTolerant(r *Reader, report func(Problem)) *Tolerant {
	if report == nil {
		report = func(Problem) {}
	}
	return &Tolerant{r: r, report: report}
}

// Header returns the header.
func (t *Tolerant) Header() Header { return t.r.Header() }

// Close closes the file.
func (t *Tolerant) Close() error { return t.r.Close() }

// Lost is how many entries were missing so far (each stood in by a gap).
func (t *Tolerant) Lost() uint64 { return t.lost }

// Next returns the next entry (a stand-in gap where one is missing), or
// io.EOF; a torn tail is reported and ends the log.
func (t *Tolerant) Next() (Entry, error) {
	for {
		if len(t.pending) > 0 {
			e := t.pending[0]
			t.pending = t.pending[1:]
			t.lastAt, t.lastDir = e.At, e.Dir
			return e, nil
		}
		if t.ended {
			return Entry{}, io.EOF
		}
		e, err := t.r.Next()
		if err == nil {
			t.skipped = t.skipped[:0]
			t.lastAt, t.lastDir = e.At, e.Dir
			return e, nil
		}
		// (Declared past the entry's return: errors.As makes them escape, an
		// allocation each, which every entry paid.)
		var le *LineError
		var se *SeqError
		switch {
		case errors.As(err, &le):
			t.report(Problem{Line: le.Line, Skipped: true, Bytes: le.Bytes, Reason: le.Err.Error()})
			t.skipped = append(t.skipped, le)
		case errors.As(err, &se):
			if se.Entry.Seq < se.Want {
				t.report(Problem{Line: se.Line, Skipped: true,
					Reason: fmt.Sprintf("seq %d again (the last entry read was seq %d)", se.Entry.Seq, se.Want-1)})
				continue
			}
			n := se.Entry.Seq - se.Want
			t.report(Problem{Line: se.Line, Missing: n,
				Reason: fmt.Sprintf("seq %d follows seq %d: %s missing", se.Entry.Seq, se.Want-1, entries(n))})
			t.standIn(se.Want, n)
			t.r.seq = se.Entry.Seq
			t.pending = append(t.pending, se.Entry)
		case errors.Is(err, io.EOF), errors.Is(err, ErrTornTail):
			t.ended = true
			if errors.Is(err, ErrTornTail) {
				t.report(Problem{Line: t.r.lineNo + 1, Torn: true, Reason: err.Error()})
			}
			if len(t.skipped) > 0 {
				// Bad lines at the end: no later seq says how many entries
				// they held, so each stands for one.
				n := uint64(len(t.skipped))
				t.report(Problem{Line: t.r.lineNo, Missing: n,
					Reason: fmt.Sprintf("the log ends after %d unreadable lines: %s missing", n, entries(n))})
				t.standIn(t.r.seq+1, n)
				t.r.seq += n
			}
		default:
			return Entry{}, err
		}
	}
}

// standIn queues n gap entries from seq on, for entries that could not be
// read; each takes the direction of the bad line it stands for, when it can.
func (t *Tolerant) standIn(seq, n uint64) {
	at := t.lastAt
	for i := uint64(0); i < n; i++ {
		dir := t.lastDir
		if dir == 0 {
			dir = sdk.C2A
		}
		bytes := uint64(0)
		if uint64(len(t.skipped)) == n {
			dir, bytes = t.skipped[i].Dir, uint64(t.skipped[i].Bytes)
		}
		t.pending = append(t.pending, Entry{Type: TypeGap, Seq: seq + i, At: at, Dir: dir,
			Gap: sdk.Gap{Frames: 1, Bytes: bytes, Reason: ReasonUnreadable}})
	}
	t.lost += n
	t.skipped = t.skipped[:0]
}

func entries(n uint64) string {
	if n == 1 {
		return "1 entry"
	}
	return fmt.Sprintf("%d entries", n)
}
