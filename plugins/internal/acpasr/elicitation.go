package acpasr

import (
	"encoding/json"
	"strconv"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// elicitation is an elicitation/create and its answer (ASR-734).
type elicitation struct {
	id, idSource, callID, mode, message, url string
	schema, response                         json.RawMessage
	status                                   string
}

func (el *elicitation) finished() bool { return el.status != "" && el.status != "pending" }

func (el *elicitation) parts(s *stream) []part {
	status := el.status
	if s.partial && status == "pending" {
		status = "partial" // a snapshot before the answer (ASR-705)
	}
	return []part{{key: asr.TypeInputRequest, rec: &asr.InputRequest{
		Envelope:        asr.Envelope{Type: asr.TypeInputRequest, Status: status},
		RequestID:       el.id,
		IDSource:        el.idSource,
		CallID:          el.callID,
		Mode:            el.mode,
		Message:         el.message,
		RequestedSchema: el.schema,
		URL:             el.url,
		Response:        el.response,
	}}}
}

// elicitationAsked opens an input_request; it is written when the answer
// arrives, at session/close, or when the recorder stops (ASR-705).
func (c *conn) elicitationAsked(f *sdk.Frame, m rpcMsg) *pending {
	sid, st := m.params.id("sessionId")
	if st != valid {
		// Request-scoped: sent before a session exists, so it belongs to
		// no observed session and is not recorded.
		c.diag(sdk.SeverityInfo, "", "elicitation/create without a session", "not recorded (ASR-734)")
		return nil
	}
	if m.kind != rpcRequest {
		c.diag(sdk.SeverityWarning, sid, "elicitation/create sent as a notification", "not recorded")
		return nil
	}
	s := c.streamFor(sid, f)
	id, idSource := "", ""
	eid, st := m.params.str("elicitationId")
	if st == valid {
		id = eid
		c.elicit[eid] = s
	} else {
		id, idSource = derivedID(s.n, m.id), "derived"
	}
	e := s.entity(asr.TypeInputRequest, id, false, f, func() body { return &elicitation{id: id, idSource: idSource} })
	el := e.b.(*elicitation)
	el.status = "pending"
	const what = "elicitation/create"
	s.patchStr(what, m.params, "mode", &el.mode)
	if el.mode != "" && el.mode != "form" && el.mode != "url" && !vendorValue(el.mode) {
		c.diag(sdk.SeverityWarning, sid, what+": unknown mode", strconv.Quote(el.mode)+" left out: ASR records form, url or a vendor mode (ASR-734)")
		el.mode = ""
	}
	s.patchStr(what, m.params, "message", &el.message)
	s.patchStr(what, m.params, "url", &el.url)
	s.patchStr(what, m.params, "toolCallId", &el.callID)
	if _, st := m.params.object("requestedSchema"); st == valid {
		el.schema = compact(m.params.raw("requestedSchema"))
	}
	return &pending{s: s, ent: e}
}

// elicitationAnswered sets the status from the action (accept → answered,
// decline → declined, cancel → cancelled, a vendor action unchanged) and,
// for an accepted form, the response. A URL-mode answer records nothing
// more: the user only agreed to open the URL.
func (c *conn) elicitationAnswered(f *sdk.Frame, m rpcMsg, q *pending) {
	s, e := q.s, q.ent
	el := e.b.(*elicitation)
	s.touch(e, f.Seq)
	action, st := m.result.str("action")
	switch {
	case m.kind == rpcError:
		c.diag(sdk.SeverityWarning, s.id, "elicitation/create answered with an error", "the input_request stays pending")
	case st != valid:
		c.diag(sdk.SeverityWarning, s.id, "elicitation response without an action", "the input_request stays pending")
	default:
		el.status = map[string]string{"accept": "answered", "decline": "declined", "cancel": "cancelled"}[action]
		switch {
		case el.status != "":
		case vendorValue(action):
			el.status = action
		default:
			// Reserved for future ACP variants: as decision 2 does for
			// tool statuses.
			el.status = "unknown"
			c.diag(sdk.SeverityWarning, s.id, "elicitation response with an unknown action", strconv.Quote(action)+" recorded as status unknown")
		}
		if _, st := m.result.object("content"); st == valid && action == "accept" && el.mode == "form" {
			el.response = compact(m.result.raw("content"))
		}
	}
	s.emit(e)
}

// elicitationComplete keeps the notification as an audit record in the
// stream of the URL-mode elicitation it completes (decision 4).
func (c *conn) elicitationComplete(f *sdk.Frame, m rpcMsg) *pending {
	eid, _ := m.params.str("elicitationId")
	s, ok := c.elicit[eid]
	if !ok {
		c.diag(sdk.SeverityInfo, "", "elicitation/complete for an elicitation not recorded", "not recorded")
		return nil
	}
	delete(c.elicit, eid) // the elicitation is over: memory does not grow with them
	s.record(&asr.Audit{
		Envelope:   asr.Envelope{Type: asr.AuditPrefix + "elicitation_complete"},
		Provenance: asr.Provenance{Native: &asr.Native{Record: compact(m.raw)}},
	}, f)
	return nil
}
