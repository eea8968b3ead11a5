package acpasr

import (
	"encoding/json"
	"errors"
	"slices"

	"github.com/acptap/acptap/internal/acpschema"
	"github.com/acptap/acptap/internal/jsonscan"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// summaryNonconforming is the diagnostic of a frame that does not conform.
const summaryNonconforming = "nonconforming frame: it does not conform to the official ACP schema"

// schemaCheck follows the connection's conversation for the schema check.
// Only Map (ACP v2 frames) and MapChecked (the wire frame a translator
// maps) check: a translator's frames (MapTranslated) are not the wire's,
// so they are not checked against the v2 schema.
type schemaCheck struct {
	off bool
	chk *acpschema.Checker
}

// checkSchema reports whether frames are checked (the default).
func (c Config) checkSchema() bool { return c.CheckSchema == nil || *c.CheckSchema }

// checkedFrame maps one frame as frame does; a line frame that does not
// conform to the ACP v2 schema is still mapped, with a warning diagnostic,
// and the sessions it names declare asr.LossNonconforming (ASR-722).
func (c *conn) checkedFrame(f *sdk.Frame) {
	c.checkedAs(f, func() { c.frame(f) })
}

// checkedAs checks f and runs mapIt, which maps f (or what stands for it):
// streams open before declare a nonconforming frame first, streams mapIt
// opens right after.
func (c *conn) checkedAs(f *sdk.Frame, mapIt func()) {
	msg, entries := c.checkFrame(f)
	if msg == "" {
		mapIt()
		return
	}
	sessions := frameSessions(f.Data, entries)
	c.cur = f
	first := ""
	if len(sessions) > 0 {
		first = sessions[0]
	}
	c.diag(sdk.SeverityWarning, first, summaryNonconforming, msg)
	// Streams already open declare before the frame's records; a stream
	// the frame opens declares right after its records.
	var later []string
	for _, id := range sessions {
		if s, ok := c.streams[id]; ok {
			s.declare([]string{asr.LossNonconforming}, sdk.When{At: f.At, Replayed: s.replaying}, []uint64{f.Seq})
		} else {
			later = append(later, id)
		}
	}
	mapIt()
	c.cur = f
	for _, id := range later {
		if s, ok := c.streams[id]; ok {
			s.declare([]string{asr.LossNonconforming}, sdk.When{At: f.At, Replayed: s.replaying}, []uint64{f.Seq})
		}
	}
}

// checkFrame checks a line frame; it returns the problem, or "" when the
// frame conforms, is not checked, or is not JSON at all (frame reports
// that), and in a batch the entries that do not conform. A frame the
// session prepared (PrepareFrames) takes the answer found then.
func (c *conn) checkFrame(f *sdk.Frame) (string, []int) {
	// Frames of later batches may lie at the same address: the mark is the
	// check's answer for this frame only.
	c.conforming = nil
	if r := c.pre; r != nil && r.f == f {
		return c.preparedCheck(r)
	}
	if f.Kind != sdk.KindLine || (f.Dir != sdk.C2A && f.Dir != sdk.A2C) {
		return "", nil
	}
	if initErr := c.initSchema(f); initErr != "" {
		c.cur = f
		c.diag(sdk.SeverityError, "", sdk.SummaryInternal, initErr)
		return "", nil
	}
	if c.schema == nil || c.schema.off {
		return "", nil
	}
	parsed := c.ft.parse(f)
	msg, entries, ok := c.schema.check(f, &c.ft.t, parsed)
	if ok {
		c.conforming = f
	}
	return msg, entries
}

// initSchema makes the connection's schema check on its first line frame
// of a known direction (c.schema stays nil before); it returns the
// diagnostic's detail when the check cannot be made (it is off then).
func (c *conn) initSchema(f *sdk.Frame) string {
	if c.schema != nil || (f.Dir != sdk.C2A && f.Dir != sdk.A2C) {
		return ""
	}
	c.schema = &schemaCheck{off: !c.cfg.checkSchema()}
	if c.schema.off {
		return ""
	}
	v := c.opts.Schema
	if v == 0 {
		v = acpschema.V2
	}
	chk, err := acpschema.NewChecker(v)
	if err != nil {
		c.schema.off = true
		return "schema check off: " + err.Error()
	}
	chk.SetTolerant(true) // a recording may start mid-conversation
	c.schema.chk = chk
	return ""
}

// check checks the line frame f (of a known direction), whose tape t is
// when parsed: the problem and the entries as checkFrame returns them, and
// whether f conforms.
func (s *schemaCheck) check(f *sdk.Frame, t *jsonscan.Tape, parsed bool) (string, []int, bool) {
	var from acpschema.Sender
	switch f.Dir {
	case sdk.C2A:
		from = acpschema.Client
	case sdk.A2C:
		from = acpschema.Agent
	default:
		return "", nil, false
	}
	var err error
	if parsed {
		err = s.chk.CheckParsed(from, f.Data, t)
	} else {
		err = s.chk.Check(from, f.Data)
	}
	if err == nil {
		return "", nil, true
	}
	if !json.Valid(f.Data) {
		return "", nil, false
	}
	var e *acpschema.Error
	if errors.As(err, &e) {
		return e.Msg, e.Entries, false
	}
	return err.Error(), nil, false
}

// frameSessions returns the sessions the non-conforming messages of a
// frame name (params.sessionId, else result.sessionId), first seen first;
// entries are the non-conforming entries of a batch (nil: the whole frame).
func frameSessions(data []byte, entries []int) []string {
	var raws []json.RawMessage
	if json.Unmarshal(data, &raws) != nil {
		raws = []json.RawMessage{data}
	} else if entries != nil {
		var bad []json.RawMessage
		for _, i := range entries {
			if i >= 0 && i < len(raws) {
				bad = append(bad, raws[i])
			}
		}
		raws = bad
	}
	var out []string
	for _, r := range raws {
		// Members of the wrong type fail the decoding but not the rest.
		var m struct {
			Params struct {
				SessionID string `json:"sessionId"`
			} `json:"params"`
			Result struct {
				SessionID string `json:"sessionId"`
			} `json:"result"`
		}
		_ = json.Unmarshal(r, &m)
		id := m.Params.SessionID
		if id == "" {
			id = m.Result.SessionID
		}
		if id != "" && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}
