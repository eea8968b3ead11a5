package acpasr

import (
	"encoding/json"
	"errors"
	"slices"

	"github.com/acptap/acptap/internal/acpschema"
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
	// conforming is the last frame the check passed: it is JSON, so the
	// mapping does not validate it again (parseRPC).
	conforming *sdk.Frame
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
// that), and in a batch the entries that do not conform.
func (c *conn) checkFrame(f *sdk.Frame) (string, []int) {
	// Frames of later batches may lie at the same address: the mark is the
	// check's answer for this frame only.
	if c.schema != nil {
		c.schema.conforming = nil
	}
	if f.Kind != sdk.KindLine {
		return "", nil
	}
	var from acpschema.Sender
	switch f.Dir {
	case sdk.C2A:
		from = acpschema.Client
	case sdk.A2C:
		from = acpschema.Agent
	default:
		return "", nil
	}
	if c.schema == nil {
		c.schema = &schemaCheck{off: !c.cfg.checkSchema()}
		if !c.schema.off {
			v := c.opts.Schema
			if v == 0 {
				v = acpschema.V2
			}
			chk, err := acpschema.NewChecker(v)
			if err != nil {
				c.schema.off = true
				c.cur = f
				c.diag(sdk.SeverityError, "", sdk.SummaryInternal, "schema check off: "+err.Error())
				return "", nil
			}
			chk.SetTolerant(true) // a recording may start mid-conversation
			c.schema.chk = chk
		}
	}
	if c.schema.off {
		return "", nil
	}
	var err error
	if c.ft.parse(f) {
		err = c.schema.chk.CheckParsed(from, f.Data, &c.ft.t)
	} else {
		err = c.schema.chk.Check(from, f.Data)
	}
	if err == nil {
		c.schema.conforming = f
		return "", nil
	}
	if !json.Valid(f.Data) {
		return "", nil
	}
	var e *acpschema.Error
	if errors.As(err, &e) {
		return e.Msg, e.Entries
	}
	return err.Error(), nil
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
