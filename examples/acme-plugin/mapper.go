package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

const (
	// Name is the plugin's name: the binary is acptap-plugin-acme and its
	// streams are sessions/<id>/acme.asr.jsonl.
	Name = "acme"
	// Version is written as producer.version in every stream header.
	Version = "0.1.0"
	// Input is the vendor extension the plugin claims: every method and
	// session update whose name starts with prefix.
	Input  = prefix + "*"
	prefix = "_acme/"
	// ProgressKind is the sessionUpdate kind mapped, and the record type written.
	ProgressKind = "_acme/progress"
	// LossUnobserved is declared in a stream when the host reports frames it
	// could not observe: progress updates may be among them.
	LossUnobserved = "_acme/unobserved_frames"
)

// vendorMark is the byte test that keeps the plugin cheap on the frames that
// are none of its business (almost all of them): only lines mentioning the
// vendor prefix are parsed.
var vendorMark = []byte(prefix)

// Mapper is the acme mapper. It has no configuration.
type Mapper struct{}

var _ sdk.Mapper = Mapper{}

// New returns the mapper.
func New() sdk.Mapper { return Mapper{} }

// Info describes the plugin.
func (Mapper) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{
		Name:         Name,
		Version:      Version,
		Description:  "ACME vendor extension: _acme/progress session updates → _acme/progress ASR records",
		Inputs:       []string{Input},
		Outputs:      []sdk.Format{sdk.FormatASR},
		Capabilities: []sdk.Capability{sdk.CapabilityRecord},
	}, nil
}

// Start opens the mapping of one connection.
func (Mapper) Start(_ context.Context, req sdk.StartRequest) (sdk.Session, error) {
	s := &session{wire: req.WireLog, streams: map[string]*stream{}, prior: map[string][][]byte{}}
	return s, nil
}

// session maps one connection. It is deterministic: outputs depend only on
// the frames, in order, never on batch boundaries or the clock.
type session struct {
	wire    string
	streams map[string]*stream
	order   []string // session ids in the order their streams started
	// prior holds, per session an earlier connection already recorded,
	// this plugin's stream as written so far (the host's session frames):
	// the stream continues it instead of starting a second header.
	prior map[string][][]byte
	out   []sdk.Output
}

// stream is one ACP session's acme stream.
type stream struct {
	id       string
	next     uint64 // seq of the next record
	declared bool   // LossUnobserved already declared
}

// Map implements sdk.Session.
func (s *session) Map(_ context.Context, frames []sdk.Frame) ([]sdk.Output, error) {
	s.out = nil
	for i := range frames {
		s.frame(&frames[i])
	}
	return s.out, nil
}

// Finish implements sdk.Session: nothing is held open between frames.
func (s *session) Finish(context.Context, string) ([]sdk.Output, error) { return nil, nil }

func (s *session) diag(sev sdk.Severity, sessionID, summary, detail string, seq uint64) {
	s.out = append(s.out, sdk.Diag(sev, sessionID, summary, detail, seq))
}

// rpc is the part of a JSON-RPC message the plugin reads.
type rpc struct {
	ID     json.RawMessage `json:"id"`
	Method *string         `json:"method"`
	Params json.RawMessage `json:"params"`
}

// updateParams are session/update's params.
type updateParams struct {
	SessionID json.RawMessage `json:"sessionId"`
	Update    json.RawMessage `json:"update"`
}

func (s *session) frame(f *sdk.Frame) {
	switch f.Kind {
	case sdk.KindGap:
		s.gap(f)
		return
	case sdk.KindSession:
		if f.Session != nil && f.Session.ID != "" && s.streams[f.Session.ID] == nil {
			s.prior[f.Session.ID] = f.Session.Prior
		}
		return
	}
	if f.Kind != sdk.KindLine || !bytes.Contains(f.Data, vendorMark) {
		return
	}
	var m rpc
	if err := json.Unmarshal(f.Data, &m); err != nil {
		s.diag(sdk.SeverityWarning, "", "a line mentioning _acme/ is not a JSON-RPC message", oneLine(err), f.Seq)
		return
	}
	if m.Method == nil {
		return // a response: acme defines no requests of its own
	}
	switch method := *m.Method; {
	case method == "session/update":
		s.update(f, m.Params)
	case strings.HasPrefix(method, prefix):
		s.diag(sdk.SeverityInfo, "", "_acme method not mapped", method, f.Seq)
	}
}

// update maps one session/update notification if it is an _acme/progress one.
func (s *session) update(f *sdk.Frame, raw json.RawMessage) {
	var p updateParams
	if json.Unmarshal(raw, &p) != nil {
		return // not ours to judge: acpv2 diagnoses malformed session/update
	}
	var head struct {
		Kind json.RawMessage `json:"sessionUpdate"`
	}
	if json.Unmarshal(p.Update, &head) != nil {
		return
	}
	var kind string
	if json.Unmarshal(head.Kind, &kind) != nil || !strings.HasPrefix(kind, prefix) {
		return
	}
	var sid string
	if json.Unmarshal(p.SessionID, &sid) != nil || sid == "" {
		s.diag(sdk.SeverityError, "", kind+": session/update without a sessionId string", "not recorded: it belongs to no stream", f.Seq)
		return
	}
	if kind != ProgressKind {
		s.diag(sdk.SeverityInfo, sid, "_acme session update not mapped", kind, f.Seq)
		return
	}
	var u progressUpdate
	if err := json.Unmarshal(p.Update, &u); err != nil {
		s.diag(sdk.SeverityError, sid, "_acme/progress: update is not an object", oneLine(err), f.Seq)
		return
	}
	rec, ok := s.progress(f, sid, u)
	if !ok {
		return
	}
	st := s.stream(sid, f)
	rec.Seq, rec.ID = st.next, asr.RecordID(st.next)
	s.emit(st, rec, f.Seq)
}

// progressUpdate is an _acme/progress update as sent; every field is checked.
type progressUpdate struct {
	ProgressID json.RawMessage            `json:"progressId"`
	Percent    json.RawMessage            `json:"percent"`
	Message    json.RawMessage            `json:"message"`
	Meta       map[string]json.RawMessage `json:"_meta"`
}

// progressRecord is the record written: envelope, body, provenance.
type progressRecord struct {
	asr.Envelope
	ProgressID string          `json:"progressId"`
	Percent    json.RawMessage `json:"percent,omitempty"`
	Message    *string         `json:"message,omitempty"`
	asr.Provenance
}

// progress validates an update: progressId is required (a string); percent
// (a number from 0 to 100) and message (a string) are optional, and a bad
// one is left out with a diagnostic.
func (s *session) progress(f *sdk.Frame, sid string, u progressUpdate) (*progressRecord, bool) {
	rec := &progressRecord{Envelope: asr.Envelope{Type: ProgressKind}}
	if json.Unmarshal(u.ProgressID, &rec.ProgressID) != nil || rec.ProgressID == "" {
		s.diag(sdk.SeverityError, sid, "_acme/progress: progressId missing or not a string", "not recorded", f.Seq)
		return nil, false
	}
	if len(u.Percent) > 0 && string(u.Percent) != "null" {
		var pct float64
		switch err := json.Unmarshal(u.Percent, &pct); {
		case err != nil:
			s.diag(sdk.SeverityWarning, sid, "_acme/progress: percent is not a number", "left out", f.Seq)
		case pct < 0 || pct > 100:
			s.diag(sdk.SeverityWarning, sid, "_acme/progress: percent is not between 0 and 100", "left out", f.Seq)
		default:
			rec.Percent = bytes.TrimSpace(u.Percent)
		}
	}
	if len(u.Message) > 0 && string(u.Message) != "null" {
		var msg string
		if json.Unmarshal(u.Message, &msg) != nil {
			s.diag(sdk.SeverityWarning, sid, "_acme/progress: message is not a string", "left out", f.Seq)
		} else {
			rec.Message = &msg
		}
	}
	if len(u.Meta) > 0 {
		rec.Meta = u.Meta
	}
	if !f.At.IsZero() {
		rec.TS, rec.TSSource = asr.FormatTime(f.At), asr.TSSourceRecorder
	}
	rec.Native = &asr.Native{Ref: &asr.NativeRef{Wire: s.wire, Frames: []uint64{f.Seq}}}
	return rec, true
}

// stream returns the session's stream, writing its header first when it is
// new; a stream an earlier connection started is continued after its last
// record.
func (s *session) stream(sid string, f *sdk.Frame) *stream {
	if st, ok := s.streams[sid]; ok {
		return st
	}
	st := &stream{id: sid, next: 1}
	s.streams[sid] = st
	s.order = append(s.order, sid)
	if prior := s.prior[sid]; len(prior) > 0 {
		delete(s.prior, sid)
		st.continueFrom(prior)
		return st
	}
	h := asr.Header{
		Type: "header", ASR: asr.FormatVersion, SessionID: sid,
		Producer: asr.Producer{Method: "recorder", Name: Name, Version: Version,
			Plugin: &asr.Plugin{Name: Name, Version: Version}, Lossy: []string{}},
	}
	if !f.At.IsZero() {
		h.CreatedAt = asr.FormatTime(f.At)
	}
	s.marshal(sdk.ASRHeader, sid, h, f.Seq)
	return st
}

// continueFrom takes up a stream already written: the next seq follows its
// last record's, and a loss it already declares is not declared again.
func (st *stream) continueFrom(lines [][]byte) {
	for _, line := range lines {
		var r struct {
			Type  string   `json:"type"`
			Seq   uint64   `json:"seq"`
			Lossy []string `json:"lossy"`
		}
		if json.Unmarshal(line, &r) != nil {
			continue
		}
		if r.Type != "header" && r.Seq >= st.next {
			st.next = r.Seq + 1
		}
		if r.Type == "declaration" && slices.Contains(r.Lossy, LossUnobserved) {
			st.declared = true
		}
	}
}

func (s *session) emit(st *stream, rec any, seqs ...uint64) {
	if s.marshal(sdk.ASRRecord, st.id, rec, seqs...) {
		st.next++
	}
}

func (s *session) marshal(kind sdk.OutputKind, sid string, v any, seqs ...uint64) bool {
	line, err := asr.Marshal(v)
	if err != nil {
		s.diag(sdk.SeverityError, sid, "internal error: record not encoded", oneLine(err), seqs[0])
		return false
	}
	s.out = append(s.out, sdk.Output{Kind: kind, Session: sid, JSON: line, FrameSeqs: seqs})
	return true
}

// gap: progress updates may have been among the frames the host could not
// observe. Every stream already started declares it once; the gap is also
// reported as a diagnostic.
func (s *session) gap(f *sdk.Frame) {
	s.diag(sdk.SeverityWarning, "", "frames not observed by the host",
		fmt.Sprintf("%d frames, %d bytes: %s", f.Gap.Frames, f.Gap.Bytes, f.Gap.Reason), f.Seq)
	for _, sid := range s.order {
		st := s.streams[sid]
		if st.declared {
			continue
		}
		st.declared = true
		d := &asr.Declaration{Envelope: asr.Envelope{Type: "declaration", Seq: st.next, ID: asr.RecordID(st.next)},
			Lossy: []string{LossUnobserved}}
		if !f.At.IsZero() {
			d.TS, d.TSSource = asr.FormatTime(f.At), asr.TSSourceRecorder
		}
		d.Native = &asr.Native{Ref: &asr.NativeRef{Wire: s.wire, Frames: []uint64{f.Seq}}}
		s.emit(st, d, f.Seq)
	}
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }
