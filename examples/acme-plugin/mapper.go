package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

const (
	Name    = "acme"  // the binary is acptap-plugin-acme; streams are sessions/<id>/acme.asr.jsonl
	Version = "0.1.0" // producer.version in every header
	prefix  = "_acme/"
	Input   = prefix + "*" // every method and session update named _acme/…
	// ProgressKind is the sessionUpdate kind mapped, and the record type written.
	ProgressKind = "_acme/progress"
	// LossUnobserved is declared when the host reports frames it could not
	// observe: progress updates may be among them.
	LossUnobserved = "_acme/unobserved_frames"
)

// Mapper is the acme mapper. It has no configuration.
type Mapper struct{}

// New returns the mapper.
func New() sdk.Mapper { return Mapper{} }

// Info describes the plugin: what it claims and what it writes.
func (Mapper) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: Name, Version: Version, Inputs: []string{Input},
		Outputs: []sdk.Format{sdk.FormatASR}, Capabilities: []sdk.Capability{sdk.CapabilityRecord},
		Description: "ACME vendor extension: _acme/progress session updates → _acme/progress ASR records"}, nil
}

// Start opens the mapping of one connection: its streams, one per session.
func (Mapper) Start(_ context.Context, req sdk.StartRequest) (sdk.Session, error) {
	p := asr.Producer{Method: "recorder", Name: Name, Version: Version, Plugin: &asr.Plugin{Name: Name, Version: Version}}
	return session{sdk.NewStreams(req, p)}, nil
}

type session struct{ w *sdk.Streams }

func (s session) Finish(context.Context, string) ([]sdk.Output, error) { return s.w.Take(), nil }

func (s session) Map(_ context.Context, frames []sdk.Frame) ([]sdk.Output, error) {
	for i := range frames {
		switch f := &frames[i]; f.Kind {
		case sdk.KindSession: // a session an earlier connection recorded: its stream goes on
			s.w.TakeUp(f)
		case sdk.KindGap:
			s.w.Diag(sdk.SeverityWarning, "", "frames not observed by the host",
				fmt.Sprintf("%d frames, %d bytes: %s", f.Gap.Frames, f.Gap.Bytes, f.Gap.Reason), f.Seq)
			s.w.Gap(f, LossUnobserved)
		case sdk.KindLine:
			if bytes.Contains(f.Data, []byte(prefix)) { // the other frames are none of acme's business
				s.line(f)
			}
		}
	}
	return s.w.Take(), nil
}

func (s session) line(f *sdk.Frame) {
	switch m := f.RPC(); {
	case m.Kind == sdk.NotRPC:
		s.w.Diag(sdk.SeverityWarning, "", "a line mentioning _acme/ is not a JSON-RPC message", m.Err.Error(), f.Seq)
	case m.Method == "session/update":
		s.update(f, m)
	case strings.HasPrefix(m.Method, prefix):
		s.w.Diag(sdk.SeverityInfo, "", "_acme method not mapped", m.Method, f.Seq)
	}
}

// progressRecord is an _acme/progress update, and the record written from it.
type progressRecord struct {
	asr.Envelope
	Kind           string `json:"sessionUpdate,omitempty"` // read, not written
	ProgressID     any    `json:"progressId"`
	Percent        any    `json:"percent,omitempty"`
	Message        any    `json:"message,omitempty"`
	asr.Provenance        // the update's _meta is kept
}

func (s session) update(f *sdk.Frame, m *sdk.RPC) {
	var p struct{ Update progressRecord }
	err := json.Unmarshal(m.Params, &p) // a member of the wrong type is an error, the rest still decodes
	if !strings.HasPrefix(p.Update.Kind, prefix) {
		return // not ours to judge: acpv2 diagnoses malformed session/update
	}
	u, sid := &p.Update, m.SessionID
	bad := func(sev sdk.Severity, what, detail string) {
		s.w.Diag(sev, sid, "_acme/progress: "+what, detail, f.Seq)
	}
	switch id, _ := u.ProgressID.(string); {
	case sid == "":
		s.w.Diag(sdk.SeverityError, "", u.Kind+": session/update without a sessionId string", "not recorded: it belongs to no stream", f.Seq)
		return
	case u.Kind != ProgressKind:
		s.w.Diag(sdk.SeverityInfo, sid, "_acme session update not mapped", u.Kind, f.Seq)
		return
	case err != nil:
		bad(sdk.SeverityError, "update does not decode", "not recorded: "+err.Error())
		return
	case id == "":
		bad(sdk.SeverityError, "progressId missing or not a string", "not recorded")
		return
	}
	if pct, ok := u.Percent.(float64); u.Percent != nil && !ok {
		u.Percent = nil
		bad(sdk.SeverityWarning, "percent is not a number", "left out")
	} else if pct < 0 || pct > 100 {
		u.Percent = nil
		bad(sdk.SeverityWarning, "percent is not between 0 and 100", "left out")
	}
	if _, ok := u.Message.(string); u.Message != nil && !ok {
		u.Message = nil
		bad(sdk.SeverityWarning, "message is not a string", "left out")
	}
	u.Envelope, u.Kind, u.Provenance = asr.Envelope{Type: ProgressKind}, "", asr.Provenance{Meta: u.Meta}
	s.w.Open(sid, f).Write(u, sdk.When{At: f.At}, f.Seq)
}
