package asrcheck

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/acptap/acptap/sdk/asr"
)

// Severity says whether a Problem makes a stream invalid.
type Severity string

// Severities.
const (
	// SeverityError: the stream is not valid ASR.
	SeverityError Severity = "error"
	// SeverityWarning: worth knowing, not a violation (e.g. an uncommitted
	// tail, which readers skip).
	SeverityWarning Severity = "warning"
)

// Problem is one finding of Validate.
type Problem struct {
	// Line is the 1-based line number; 0 means the stream as a whole.
	Line     int      `json:"line"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
}

// String renders the problem as "line N: message" (with "warning: " for a
// warning).
func (p Problem) String() string {
	s := p.Message
	if p.Severity == SeverityWarning {
		s = "warning: " + s
	}
	if p.Line > 0 {
		s = "line " + strconv.Itoa(p.Line) + ": " + s
	}
	return s
}

// Summary is what Validate learned about a stream.
type Summary struct {
	SessionID string `json:"sessionId,omitempty"`
	// Lines is the number of committed lines (the header included).
	Lines int `json:"lines"`
	// Records is the number of record lines (every committed line after the
	// header).
	Records int `json:"records"`
	// Types counts records by type.
	Types map[string]int `json:"types,omitempty"`
	// Entities is the number of distinct entities (identity = type + key;
	// a file_change, audit or vendor record and its revisions are one).
	Entities int `json:"entities"`
	// Lossy is the effective header's loss categories (the header's and
	// every declaration's, sorted).
	Lossy []string `json:"lossy"`
	// TailBytes is the size of an uncommitted tail (bytes after the last LF).
	TailBytes int `json:"tailBytes,omitempty"`
	Errors    int `json:"errors"`
	Warnings  int `json:"warnings"`
}

// Valid reports whether the stream had no errors (warnings allowed).
func (s Summary) Valid() bool { return s.Errors == 0 }

// maxSchemaMessages caps the schema messages reported for one line.
const maxSchemaMessages = 5

// Validate checks a stream line by line against the ASR JSON Schema and the
// stream invariants: the header first; seq dense from 1; id = "r<seq>" and
// unique; supersedes pointing back to the latest record of the same entity;
// LF after every line (a final line without LF is an uncommitted tail, a
// warning); lineage consistent; declared losses covering what the stream
// contains (ASR-722, for streams mapped from ACP). Each finding goes to
// report (which may be nil). Validate never holds the stream: it keeps one
// line at a time and a set of entity keys.
//
// The error is non-nil only when the stream cannot be read; an invalid
// stream is a Summary with Errors > 0.
func Validate(r io.Reader, report func(Problem)) (Summary, error) {
	return ValidateLimit(r, 0, report)
}

// ValidateLimit is Validate with lines bounded by maxLine (0:
// DefaultMaxLine): a longer line is an error of the stream at its line
// number, and validation stops there, since what follows cannot be read
// as records.
func ValidateLimit(r io.Reader, maxLine int, report func(Problem)) (Summary, error) {
	cs, err := compiled()
	if err != nil {
		return Summary{}, err
	}
	v := newValidator(cs, report)
	rd := asr.NewReader(r)
	rd.MaxLine = maxLine
	for {
		line, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, asr.ErrLineTooLong) {
			max := maxLine
			if max <= 0 {
				max = asr.DefaultMaxLine
			}
			v.errorf(rd.Line()+1, "line longer than %d bytes (the bound); the rest of the stream is not read", max)
			return v.finish(), nil
		}
		if err != nil {
			return v.finish(), err
		}
		v.line(rd.Line(), line)
	}
	if tail := rd.Tail(); len(tail) > 0 {
		v.sum.TailBytes = len(tail)
		v.warnf(rd.Line()+1, "uncommitted tail: %d bytes after the last LF are not a record (an interrupted write: readers skip it, the writer truncates it on reopen)", len(tail))
	}
	if rd.Line() == 0 {
		v.errorf(0, "empty stream: no header line")
	}
	return v.finish(), nil
}

// validator is the state of one Validate run.
type validator struct {
	cs     *compiledSchemas
	report func(Problem)
	sum    Summary
	rules  *rules
}

func newValidator(cs *compiledSchemas, report func(Problem)) *validator {
	v := &validator{cs: cs, report: report, sum: Summary{Types: map[string]int{}}}
	v.rules = newRules(v)
	return v
}

func (v *validator) emit(p Problem) {
	if p.Severity == SeverityError {
		v.sum.Errors++
	} else {
		v.sum.Warnings++
	}
	if v.report != nil {
		v.report(p)
	}
}

func (v *validator) errorf(line int, format string, args ...any) {
	v.emit(Problem{Line: line, Severity: SeverityError, Message: fmt.Sprintf(format, args...)})
}

func (v *validator) warnf(line int, format string, args ...any) {
	v.emit(Problem{Line: line, Severity: SeverityWarning, Message: fmt.Sprintf(format, args...)})
}

// line checks one committed line (without its LF).
func (v *validator) line(n int, b []byte) {
	v.sum.Lines = n
	if n > 1 {
		v.sum.Records++
	}
	if len(b) > 0 && b[len(b)-1] == '\r' {
		v.errorf(n, "line ends with CR LF: ASR lines end with LF alone")
		b = b[:len(b)-1]
	}
	if len(bytes.TrimSpace(b)) == 0 {
		v.errorf(n, "empty line: every line is one JSON object")
		v.rules.skip(n)
		return
	}
	if !utf8.Valid(b) {
		v.errorf(n, "not valid UTF-8")
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		v.errorf(n, "not JSON: %s", oneLine(err.Error()))
		v.rules.skip(n)
		return
	}
	obj, ok := inst.(map[string]any)
	if !ok {
		v.errorf(n, "not a JSON object: every line is one JSON object")
		v.rules.skip(n)
		return
	}
	typ, _ := obj["type"].(string)
	switch {
	case n == 1 && typ != "header":
		v.errorf(n, "line 1 must be the header (\"type\":\"header\"), found %s", describeType(obj["type"]))
		v.sum.Records++
	case n > 1 && typ == "header":
		v.errorf(n, "a second header: the header is line 1 only, every later line is a record")
		v.rules.skip(n)
		return
	}
	if typ != "" && typ != "header" {
		v.sum.Types[typ]++
	}
	v.checkSchema(n, typ, inst)
	if typ == "header" {
		v.rules.header(n, obj)
		return
	}
	v.rules.record(n, typ, obj)
}

// checkSchema validates one line against the schema of its type.
func (v *validator) checkSchema(n int, typ string, inst any) {
	s, known := v.cs.forType(typ)
	what := typ + " record"
	switch {
	case typ == "header":
		what = "header"
	case typ == "":
		what = "record"
	case !known:
		v.errorf(n, "unknown record type %q: not an ASR type, not an audit-only %s<kind>, not a \"_\"-prefixed vendor type", typ, asr.AuditPrefix)
	}
	err := s.Validate(inst)
	if err == nil {
		return
	}
	msgs := schemaMessages(err)
	for i, m := range msgs {
		if i == maxSchemaMessages {
			v.errorf(n, "%s: … and %d more schema problems", what, len(msgs)-i)
			break
		}
		v.errorf(n, "%s: %s", what, m)
	}
}

func (v *validator) finish() Summary {
	v.sum.Lossy = asr.SortedKeys(v.rules.lossy)
	v.sum.Entities = v.rules.entityCount()
	v.sum.SessionID = v.rules.sessionID
	return v.sum
}

func describeType(t any) string {
	switch t := t.(type) {
	case nil:
		return "no type"
	case string:
		return "type " + strconv.Quote(t)
	}
	return "a type that is not a string"
}
