package acpasr

import (
	"encoding/json"
	"strconv"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// permission is a session/request_permission and its answer (ASR-716).
type permission struct {
	id                    string // "<n>:<JSON-RPC id>"
	title, description    string
	options, subject      json.RawMessage
	kinds                 map[string]string // optionId → kind
	status                string            // pending, resolved
	decision, selectedOpt string
}

func (p *permission) finished() bool { return p.status == "resolved" }

func (p *permission) parts(*stream) []part {
	return []part{{key: asr.TypePermission, rec: &asr.Permission{
		Envelope:         asr.Envelope{Type: asr.TypePermission, Status: p.status},
		RequestID:        p.id,
		IDSource:         "derived",
		Title:            p.title,
		Description:      p.description,
		Options:          p.options,
		Subject:          p.subject,
		Decision:         p.decision,
		SelectedOptionID: p.selectedOpt,
	}}}
}

// permissionAsked writes the request as a pending permission at once.
func (c *conn) permissionAsked(f *sdk.Frame, m rpcMsg) *pending {
	sid, st := m.params.id("sessionId")
	if st != valid {
		c.diag(sdk.SeverityWarning, "", "session/request_permission without a sessionId", "not recorded")
		return nil
	}
	if m.kind != rpcRequest {
		c.diag(sdk.SeverityWarning, sid, "session/request_permission sent as a notification", "not recorded")
		return nil
	}
	s := c.streamFor(sid, f)
	id := derivedID(s.n, m.id)
	e := s.entity(asr.TypePermission, id, false, f, func() body { return &permission{id: id} })
	p := e.b.(*permission)
	p.status = "pending"
	const what = "session/request_permission"
	s.patchStr(what, m.params, "title", &p.title)
	s.patchStr(what, m.params, "description", &p.description)
	options, st := m.params.array("options")
	if st == invalid {
		c.diag(sdk.SeverityWarning, sid, what+": options is not an array", "left out")
	}
	if st == valid {
		p.options = s.objectArray(what+": options", m.params.raw("options"), options)
		p.kinds = map[string]string{}
		for _, x := range options {
			o, _ := parseObj(x)
			oid, st1 := o.str("optionId")
			kind, st2 := o.str("kind")
			if st1 == valid && st2 == valid {
				p.kinds[oid] = kind
			}
		}
	}
	p.subject = subjectOf(m.params)
	s.emit(e)
	return &pending{s: s, ent: e}
}

// subjectOf maps ACP's subject (decision 3): tool_call → {callId},
// command → {command}, anything else verbatim.
func subjectOf(params obj) json.RawMessage {
	subj, st := params.object("subject")
	if st != valid {
		return nil
	}
	var v any
	switch typ, _ := subj.str("type"); typ {
	case "tool_call":
		tc, _ := subj.object("toolCall")
		if id, st := tc.str("toolCallId"); st == valid {
			v = struct {
				CallID string `json:"callId"`
			}{id}
		}
	case "command":
		if cmd, st := subj.str("command"); st == valid {
			v = struct {
				Command string `json:"command"`
			}{cmd}
		}
	}
	if v == nil {
		return compact(params.raw("subject"))
	}
	b, _ := asr.Marshal(v)
	return b
}

// permissionAnswered resolves the permission: selected → selectedOptionId
// and decision = that option's kind; cancelled → decision "cancelled"; a
// vendor outcome → decision = the outcome, unchanged (ASR-709).
func (c *conn) permissionAnswered(f *sdk.Frame, m rpcMsg, q *pending) {
	s, e := q.s, q.ent
	p := e.b.(*permission)
	if m.kind == rpcError {
		c.diag(sdk.SeverityWarning, s.id, "session/request_permission answered with an error", "the permission stays pending")
		return
	}
	out, _ := m.result.object("outcome")
	outcome, st := out.str("outcome")
	if st != valid {
		c.diag(sdk.SeverityWarning, s.id, "permission response without an outcome", "the permission stays pending")
		return
	}
	s.touch(e, f.Seq)
	p.status = "resolved"
	switch outcome {
	case "selected":
		p.selectedOpt, _ = out.str("optionId")
		p.decision = p.kinds[p.selectedOpt]
		if p.decision == "" {
			c.diag(sdk.SeverityWarning, s.id, "selected permission option is not among the options", "decision left out")
		}
	default:
		p.decision = outcome
	}
	s.emit(e)
}

// derivedID is "<n>:<id>" (ASR-716, ASR-734).
func derivedID(n int, id json.RawMessage) string {
	return strconv.Itoa(n) + ":" + idString(id)
}
