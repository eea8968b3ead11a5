package aep

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"time"
)

// Version is the envelope version this package writes (the aep attribute).
const Version = "0.1"

// TimeFormat is how events write time: UTC with milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// Event is one AEP event (AEP-0001 §5). Empty strings and nil pointers are
// absent attributes, which the encoding omits (never null).
type Event struct {
	ID          string
	Type        string
	Subject     string
	Time        time.Time
	Source      string
	Agent       string
	Session     string
	Run         string
	Step        string
	Seq         *int64
	Epoch       *int64
	Cause       string
	Traceparent string
	Severity    string
	// Capture is written unless CaptureUnset is set.
	Capture      Level
	CaptureUnset bool
	// Data is the payload; nil means absent.
	Data map[string]any
}

// Int returns a pointer to n, for Seq and Epoch.
func Int(n int64) *int64 { return &n }

// MarshalJSON writes the envelope in the order of AEP-0001's attribute
// table, with data in canonical form, so equal events encode to equal bytes.
func (e *Event) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.Grow(512)
	b.WriteString(`{"aep":"` + Version + `"`)
	name := func(k string) {
		b.WriteString(`,"`)
		b.WriteString(k)
		b.WriteString(`":`)
	}
	str := func(k, v string) {
		if v != "" {
			name(k)
			writeString(&b, v)
		}
	}
	var digits [20]byte
	num := func(k string, v *int64) {
		if v != nil {
			name(k)
			b.Write(strconv.AppendInt(digits[:0], *v, 10))
		}
	}
	str("id", e.ID)
	str("type", e.Type)
	str("subject", e.Subject)
	if !e.Time.IsZero() {
		var tb [40]byte // the time is printable ASCII: written as it is
		name("time")
		b.WriteByte('"')
		b.Write(e.Time.UTC().AppendFormat(tb[:0], TimeFormat))
		b.WriteByte('"')
	}
	str("source", e.Source)
	str("agent", e.Agent)
	str("session", e.Session)
	str("run", e.Run)
	str("step", e.Step)
	num("seq", e.Seq)
	num("epoch", e.Epoch)
	str("cause", e.Cause)
	str("traceparent", e.Traceparent)
	str("severity", e.Severity)
	if !e.CaptureUnset {
		str("capture", e.Capture.String())
	}
	if e.Data != nil {
		b.WriteString(`,"data":`)
		if err := writeCanon(&b, e.Data); err != nil {
			return nil, fmt.Errorf("event %s data: %w", e.Type, err)
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Header is the part of a received event that receivers route and check
// on. Seq and Epoch are nil when absent.
type Header struct {
	AEP      string          `json:"aep"`
	ID       string          `json:"id"`
	Type     string          `json:"type"`
	Subject  string          `json:"subject"`
	Source   string          `json:"source"`
	Agent    string          `json:"agent"`
	Session  string          `json:"session"`
	Run      string          `json:"run"`
	Seq      *int64          `json:"seq"`
	Epoch    *int64          `json:"epoch"`
	Cause    string          `json:"cause"`
	Severity string          `json:"severity"`
	Capture  string          `json:"capture"`
	Data     json.RawMessage `json:"data"`
}

// ParseHeader decodes the header of one event.
func ParseHeader(raw []byte) (*Header, error) {
	var h Header
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, err
	}
	return &h, nil
}

// EpochOrZero is the event's epoch with the default applied.
func (h *Header) EpochOrZero() int64 {
	if h.Epoch == nil {
		return 0
	}
	return *h.Epoch
}

var safeSegment = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Source returns the RECOMMENDED source URI aep://{host}/agent/{agent},
// with /session/{session} appended when session is not empty. Segments
// that are not plain names are percent-encoded.
func Source(host, agent, session string) string {
	s := "aep://" + url.PathEscape(host) + "/agent/" + url.PathEscape(agent)
	if session != "" {
		s += "/session/" + url.PathEscape(session)
	}
	return s
}

// SafeName reports whether s may be used verbatim as a file name or URI
// segment (^[A-Za-z0-9][A-Za-z0-9._-]*$).
func SafeName(s string) bool { return safeSegment.MatchString(s) }

// FileName is the AEP-0003 §3.1 file-name sanitizer: names matching
// ^[A-Za-z0-9][A-Za-z0-9._-]*$ are kept, any other is percent-encoded
// byte by byte (every byte outside [A-Za-z0-9._-], and a leading . - _).
func FileName(s string) string {
	if SafeName(s) {
		return s
	}
	var b bytes.Buffer
	for i := 0; i < len(s); i++ {
		c := s[i]
		plain := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			(i > 0 && (c == '.' || c == '_' || c == '-'))
		if plain {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
