package aep

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
)

// Stream enforces the cross-event rules of AEP 0.1 on the events of many
// emitters, in arrival order (what a receiver checks beyond the schemas):
// one id never names two events ((source, id) dedupe), (epoch, seq) never
// regresses within a (source, session), at most one terminal per run and
// one session.ended per session, no session.ended while an attention
// request is pending, form answers keep the values rule, and one ack
// decision per command. The zero value is ready to use; it is not safe for
// concurrent use.
type Stream struct {
	ids       map[[2]string][32]byte
	pos       map[[2]string][2]int64
	terminals map[[3]string]bool
	ended     map[[2]string]bool
	pending   map[[2]string]map[string][]FieldSpec
	acks      map[[2]string]bool
}

// Duplicate is returned by Admit for an event already admitted with the
// same content: a legal redelivery that must not be stored twice.
var Duplicate = fmt.Errorf("duplicate event")

var runTerminals = map[string]bool{"run.finished": true, "run.failed": true, "run.cancelled": true}

// Admit checks h (whose canonical JSON is canon) against the events
// admitted before it and, when it passes, records it. It returns nil,
// Duplicate, or an error naming the rule broken.
func (s *Stream) Admit(h *Header, canon []byte) error {
	commit, err := s.Check(h, canon)
	if err == nil {
		commit()
	}
	return err
}

// Check is Admit without recording: it returns the function that records
// the event, so a receiver marks an event seen only once it is stored (a
// failed write leaves the event unseen, and its retry is stored, not
// taken for a duplicate). The state must not change between Check and
// the call of commit.
func (s *Stream) Check(h *Header, canon []byte) (commit func(), err error) {
	if s.ids == nil {
		s.ids = map[[2]string][32]byte{}
		s.pos = map[[2]string][2]int64{}
		s.terminals = map[[3]string]bool{}
		s.ended = map[[2]string]bool{}
		s.pending = map[[2]string]map[string][]FieldSpec{}
		s.acks = map[[2]string]bool{}
	}
	idKey := [2]string{h.Source, h.ID}
	sum := sha256.Sum256(canon)
	if prev, ok := s.ids[idKey]; ok {
		if prev == sum {
			return nil, Duplicate
		}
		return nil, fmt.Errorf("id %q of %s already names a different event (AEP-0001 §5.1)", h.ID, h.Source)
	}
	sess := [2]string{h.Source, h.Session}
	var commits []func()
	if h.Seq != nil && h.Session != "" {
		p := [2]int64{h.EpochOrZero(), *h.Seq}
		if last, ok := s.pos[sess]; ok && (p[0] < last[0] || p[0] == last[0] && p[1] <= last[1]) {
			what := "seq regression without an epoch bump"
			if p[0] < last[0] {
				what = "epoch regression"
			}
			return nil, fmt.Errorf("%s: (epoch %d, seq %d) after (epoch %d, seq %d) in session %q (AEP-0001 §7.2)",
				what, p[0], p[1], last[0], last[1], h.Session)
		}
		commits = append(commits, func() { s.pos[sess] = p })
	}
	switch {
	case runTerminals[h.Type] && h.Run != "":
		k := [3]string{h.Source, h.Session, h.Run}
		if s.terminals[k] {
			return nil, fmt.Errorf("run %q already has a terminal (AEP-0002 §2 convention 5)", h.Run)
		}
		commits = append(commits, func() { s.terminals[k] = true })
	case h.Type == "session.ended":
		if s.ended[sess] {
			return nil, fmt.Errorf("session %q already ended (AEP-0002 §2 convention 5)", h.Session)
		}
		if n := len(s.pending[sess]); n > 0 {
			return nil, fmt.Errorf("session %q ends with %d attention request(s) pending (AEP-0002 §7.2)", h.Session, n)
		}
		commits = append(commits, func() { s.ended[sess] = true })
	case h.Type == "attention.requested":
		fields := formFields(h.Data)
		commits = append(commits, func() {
			if s.pending[sess] == nil {
				s.pending[sess] = map[string][]FieldSpec{}
			}
			s.pending[sess][h.ID] = fields
		})
	case h.Type == "attention.resolved" || h.Type == "attention.timeout":
		commits = append(commits, func() { delete(s.pending[sess], h.Subject) })
	case h.Type == "attention.answered":
		if fields, ok := s.pending[sess][h.Subject]; ok && fields != nil {
			if err := checkFormAnswer(fields, h.Data); err != nil {
				return nil, err
			}
		}
	case (h.Type == "control.accepted" || h.Type == "control.rejected") && h.Cause != "":
		k := [2]string{h.Source, h.Cause}
		if s.acks[k] {
			return nil, fmt.Errorf("command %q already has an ack decision (AEP-0004 §3)", h.Cause)
		}
		commits = append(commits, func() { s.acks[k] = true })
	}
	return func() {
		s.ids[idKey] = sum
		for _, c := range commits {
			c()
		}
	}, nil
}

func formFields(data json.RawMessage) []FieldSpec {
	var d struct {
		Kind   string      `json:"kind"`
		Fields []FieldSpec `json:"fields"`
	}
	if json.Unmarshal(data, &d) != nil || d.Kind != "form" {
		return nil
	}
	if d.Fields == nil {
		return []FieldSpec{}
	}
	return d.Fields
}

// checkFormAnswer is the AEP-0006 values rule: a select field without
// other:true is answered only with its choice ids.
func checkFormAnswer(fields []FieldSpec, data json.RawMessage) error {
	var d struct {
		Answer struct {
			Values map[string]any `json:"values"`
		} `json:"answer"`
	}
	if json.Unmarshal(data, &d) != nil {
		return nil
	}
	for _, f := range fields {
		v, ok := d.Answer.Values[f.ID]
		if !ok || f.Type != "select" || f.Other {
			continue
		}
		if !structuralValue(f, v) {
			return fmt.Errorf("form field %q is a closed select: %v is not one of its choice ids (AEP-0006)", f.ID, v)
		}
	}
	return nil
}
