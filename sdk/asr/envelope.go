package asr

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"time"
)

// TSSourceRecorder marks a ts taken from the recorder's receipt time (ASR-707).
const TSSourceRecorder = "recorder"

// Envelope is the leading part of every record: identity, time and status.
// Record bodies embed it first, then their own fields, then Provenance, so
// the JSON reads envelope, body, provenance.
type Envelope struct {
	Type string `json:"type"`
	// Seq is dense within the stream (1, 2, 3 …; the header is 0).
	Seq uint64 `json:"seq"`
	// ID is "r<seq>".
	ID         string `json:"id"`
	TS         string `json:"ts,omitempty"`
	TSSource   string `json:"tsSource,omitempty"`
	ObservedAt string `json:"observedAt,omitempty"`
	// Status is set where the record type has one.
	Status string `json:"status,omitempty"`
	// Supersedes is the id of the record this one revises (ASR-706).
	Supersedes string `json:"supersedes,omitempty"`
	// CopiedFrom marks content copied from another stream (ASR-718).
	CopiedFrom *CopiedFrom `json:"copiedFrom,omitempty"`
}

// Provenance is the trailing part of every record: where it came from, what
// was not captured, how it was assembled, and its folded _meta.
type Provenance struct {
	Native   *Native                    `json:"native,omitempty"`
	Capture  map[string]CaptureState    `json:"capture,omitempty"`
	Assembly string                     `json:"assembly,omitempty"`
	Meta     map[string]json.RawMessage `json:"_meta,omitempty"`
}

// Native points at the wire frames a record came from (ASR-723) and, for
// audit-only records, holds the source element verbatim (ASR-710).
type Native struct {
	Ref    *NativeRef      `json:"ref,omitempty"`
	Record json.RawMessage `json:"record,omitempty"`
}

// NativeRef names a wire log and the frame seqs in it.
type NativeRef struct {
	Wire   string   `json:"wire"`
	Frames []uint64 `json:"frames"`
}

// CaptureState says why a field is missing: "absent" (the source did not
// give it), "redacted", ….
type CaptureState struct {
	State string `json:"state"`
}

// Assembly values (ASR-704).
const (
	AssemblyChunks = "chunks"
	AssemblyFolded = "folded"
)

// Record is any record body: it exposes its envelope and provenance.
// *Message, *ToolCall, … implement it through their embedded fields.
type Record interface {
	Env() *Envelope
	Prov() *Provenance
}

// Env returns the envelope.
func (e *Envelope) Env() *Envelope { return e }

// Prov returns the provenance.
func (p *Provenance) Prov() *Provenance { return p }

// RecordID is the id of the record with the given seq.
func RecordID(seq uint64) string { return "r" + strconv.FormatUint(seq, 10) }

// FormatTime renders t as RFC 3339 UTC with milliseconds, e.g.
// "2026-10-26T14:30:41.207Z".
func FormatTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// Marshal encodes v as one JSON line without LF: struct fields in order,
// map keys sorted, and no HTML escaping (text stays as received).
func Marshal(v any) ([]byte, error) {
	buf := canonPool.Get().(*[]byte)
	if line, ok := encode((*buf)[:0], v); ok {
		out := bytes.Clone(line)
		recycle(buf, line)
		return out, nil
	}
	canonPool.Put(buf)
	return marshalJSON(v)
}

// marshalJSON is Marshal by encoding/json alone.
func marshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// SortedKeys returns the keys of a set in byte order.
func SortedKeys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
