// Session-level updates that are snapshots, not entities: usage, session
// info, configuration and notices. Each is written as it arrives.

package acpasr

import (
	"encoding/json"
	"strconv"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// usageUpdate maps usage_update to a session-scope cumulative
// usage_summary (ASR-720). used is the context window in use.
func (s *stream) usageUpdate(f *sdk.Frame, u obj) bool {
	used, st1 := u.number("used")
	size, st2 := u.number("size")
	if st1 != valid || st2 != valid || !isUint(used) || !isUint(size) {
		s.c.diag(sdk.SeverityWarning, s.id, "usage_update: used or size missing or not a non-negative integer", "kept as an audit record")
		return false
	}
	rec := &asr.UsageSummary{
		Envelope:      asr.Envelope{Type: asr.TypeUsageSummary},
		Scope:         "session",
		Cumulative:    true,
		ContextWindow: &asr.ContextWindow{Used: own(used), Size: own(size)},
	}
	switch cost, st := u.object("cost"); st {
	case valid:
		amount, st1 := cost.number("amount")
		currency, st2 := cost.str("currency")
		if st1 == valid && st2 == valid && currency != "" {
			rec.Cost = &asr.Cost{Amount: own(amount), Currency: currency}
		} else {
			s.c.diag(sdk.SeverityWarning, s.id, "usage_update: cost without a numeric amount and a currency", "cost left out")
		}
	case invalid:
		s.c.diag(sdk.SeverityWarning, s.id, "usage_update: cost is not an object", "cost left out")
	}
	s.record(rec, f)
	return true
}

// sessionInfoUpdate writes the title by the patch rule (null clears);
// updatedAt is not recorded. _meta folds into the session info's.
func (s *stream) sessionInfoUpdate(f *sdk.Frame, u obj) bool {
	switch _, st := u.str("title"); st {
	case isNull, valid:
		s.title = compact(u.raw("title"))
	case invalid:
		s.c.diag(sdk.SeverityWarning, s.id, "session_info_update: title is not a string", "title unchanged")
	}
	_, hasTitle := u.get("title")
	_, hasMeta := u.get("_meta")
	s.infoMeta.fold(s, u)
	if hasTitle || hasMeta {
		title := s.title
		if title == nil {
			title = json.RawMessage("null") // no title known: the record says so (its title is required)
		}
		s.record(&asr.SessionInfo{
			Envelope:   asr.Envelope{Type: asr.TypeSessionInfo},
			Title:      title,
			Provenance: asr.Provenance{Meta: s.infoMeta.out()},
		}, f)
	}
	return true
}

// configUpdate maps config_option_update: the full option set, and the
// current model and mode when an option's category says so.
func (s *stream) configUpdate(f *sdk.Frame, u obj) bool {
	options, st := u.array("configOptions")
	if st != valid {
		s.c.diag(sdk.SeverityWarning, s.id, "config_option_update: configOptions is not an array", "kept as an audit record")
		return false
	}
	rec := &asr.ConfigChange{Envelope: asr.Envelope{Type: asr.TypeConfigChange}, Options: s.objectArray("config_option_update: configOptions", u.raw("configOptions"), options)}
	for _, x := range options {
		o, _ := parseObj(x)
		category, _ := o.str("category")
		value, st := o.str("currentValue")
		switch {
		case st != valid:
		case category == "model" && rec.Model == nil:
			rec.Model = &asr.ModelRef{ID: value}
		case category == "mode" && rec.Mode == "":
			rec.Mode = value
		}
	}
	s.record(rec, f)
	return true
}

// notice maps a notice to a message from the harness to the user
// (decision 5). ACP notices have no id: it is derived from the connection
// number and the frame, "notice:<n>:<seq>" (".<i>" for a batch element).
func (s *stream) notice(f *sdk.Frame, u obj) bool {
	severity, st1 := u.str("severity")
	title, st2 := u.str("title")
	if st1 != valid || st2 != valid {
		s.c.diag(sdk.SeverityWarning, s.id, "notice: severity or title missing or not a string", "kept as an audit record")
		return false
	}
	content := []json.RawMessage{textPart("text", title)}
	if d, st := u.str("description"); st == valid {
		content = append(content, textPart("text", d))
	}
	id := "notice:" + strconv.Itoa(s.n) + ":" + strconv.FormatUint(f.Seq, 10)
	if f.BatchSize > 0 {
		id += "." + strconv.Itoa(f.BatchIndex)
	}
	rec := &asr.Message{
		Envelope:  asr.Envelope{Type: asr.TypeMessage},
		MessageID: id,
		IDSource:  "derived",
		Origin:    "notice",
		Author:    "harness",
		Audience:  "user",
		Severity:  severity,
		Content:   content,
	}
	s.record(rec, f)
	return true
}

// modeUpdate maps ACP v1's current_mode_update (Options.ModeUpdates) to a
// config_change with the mode: ACP v1 reports the mode on its own, not as
// a config option.
func (s *stream) modeUpdate(f *sdk.Frame, u obj) bool {
	mode, st := u.str("currentModeId")
	if st != valid || mode == "" {
		s.c.diag(sdk.SeverityWarning, s.id, "current_mode_update: currentModeId missing or not a string", "kept as an audit record")
		return false
	}
	s.record(&asr.ConfigChange{Envelope: asr.Envelope{Type: asr.TypeConfigChange}, Mode: mode}, f)
	return true
}
