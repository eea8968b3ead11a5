package aep

import (
	"slices"
	"time"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/aep"
)

// attKey names a pending attention request: the agent's JSON-RPC id.
func attKey(id string) string { return "a2c|" + id }

// raise opens an attention request: attention.requested, remembered until
// its outcome (or a dismissal) closes it. attOrder holds the pending keys
// in the order they were raised (a key raised again while pending keeps
// its place; one raised again after its resolution goes last).
func (c *conn) raise(st *sess, key, kind string, at time.Time, fields []formField) *draft {
	d := c.newDraft(st, "attention.requested", "notice")
	d.setKey = "att:" + key
	delete(st.ids, "attlast:"+key)
	if _, dup := st.attention[key]; !dup {
		st.attOrder = append(st.attOrder, key)
	}
	st.attention[key] = &attention{key: key, kind: kind, at: at, fields: fields}
	return d
}

// permission maps session/request_permission: the editor's gate, observed
// read-only (no options claim, no respond_via; the option list rides as a
// count). Subject is the tool call.
func (c *conn) permission(f *sdk.Frame, st *sess, m msg) []*draft {
	var subject, title string
	if tc := child(m.params, "toolCall"); tc != nil { // v1
		subject, _ = str(tc, "toolCallId")
		title, _ = str(tc, "title")
	}
	if s := child(m.params, "subject"); s != nil { // v2
		if tc := child(s, "toolCall"); tc != nil {
			subject, _ = str(tc, "toolCallId")
		} else {
			subject, _ = str(s, "toolCallId")
		}
	}
	if t, ok := str(m.params, "title"); ok {
		title = t
	}
	d := c.raise(st, attKey(m.id), "permission", f.At, nil)
	d.subject = subject
	d.data = obj{"kind": "permission", "prompt": c.attentionPrompt(d.level, "permission", subject, "Permission requested: ", title),
		"options_count": len(list(m.params, "options"))}
	if d.level == aep.Full {
		d.data["context"] = m.params
	}
	d.tp = traceparent(m.params)
	return []*draft{d}
}

// attentionPrompt is the prompt of an attention request: synthesized from
// structure at metadata (AEP-0003 §9.2), the agent's text through the
// redaction pipeline at redacted, verbatim at full.
func (c *conn) attentionPrompt(level aep.Level, kind, subject, prefix, text string) string {
	if level < aep.Redacted || text == "" {
		return aep.SynthesizedPrompt(Agent, kind, subject)
	}
	if level == aep.Redacted {
		text = c.s.redactor.Text(text)
	}
	return prefix + text
}

// permissionOutcome maps the editor's answer: a selected option is
// attention.answered (via oob, the optionId verbatim) then resolved; a
// cancelled outcome, an error or anything else resolves as dismissed.
func (c *conn) permissionOutcome(f *sdk.Frame, st *sess, m msg, p *pending) []*draft {
	outcome := child(m.result, "outcome")
	kind, _ := str(outcome, "outcome")
	if m.kind == kindResult && kind == "selected" {
		answer := obj{}
		if opt, ok := str(outcome, "optionId"); ok {
			answer["option"] = opt
		}
		return answered(st, attKey(m.id), c.answer(st, attKey(m.id), f, obj{"answer": answer, "via": "oob"}))
	}
	return answered(st, attKey(m.id), c.resolve(st, attKey(m.id), f.At, "dismissed"))
}

// answered marks the drafts that map the response to attention request
// key as its last events: the request's ids are forgotten once they are
// stamped. (A request id used again is a new request: raise remembers it
// afresh.)
func answered(st *sess, key string, ds []*draft) []*draft {
	if len(ds) > 0 {
		last := ds[len(ds)-1]
		last.release = append(last.release, "att:"+key, "attlast:"+key)
	}
	return ds
}

// answer is attention.answered followed, when the request was observed,
// by attention.resolved{answered}.
func (c *conn) answer(st *sess, key string, f *sdk.Frame, data obj) []*draft {
	d := c.newDraft(st, "attention.answered", "info")
	d.data, d.subjectKey, d.causeKey, d.setKey = data, "att:"+key, "att:"+key, "attlast:"+key
	if _, ok := st.attention[key]; !ok {
		return []*draft{d}
	}
	return append([]*draft{d}, c.resolve(st, key, f.At, "answered")...)
}

// resolve closes a request with attention.resolved.
func (c *conn) resolve(st *sess, key string, at time.Time, resolution string) []*draft {
	d := c.newDraft(st, "attention.resolved", "info")
	d.data, d.subjectKey = obj{"resolution": resolution}, "att:"+key
	d.causeKey, d.causeAlt = "attlast:"+key, "att:"+key
	if a, ok := st.attention[key]; ok {
		if ms := at.Sub(a.at).Milliseconds(); ms >= 0 {
			d.data["latency_ms"] = ms
		}
		delete(st.attention, key)
		if i := slices.Index(st.attOrder, key); i >= 0 {
			st.attOrder = slices.Delete(st.attOrder, i, i+1)
		}
	}
	return []*draft{d}
}

// dismissAll resolves every pending request of the session as dismissed
// (before session.ended, and when the connection ends).
func (c *conn) dismissAll(st *sess) []*draft {
	var ds []*draft
	keys := st.attOrder
	st.attOrder = nil
	for _, key := range keys {
		if _, ok := st.attention[key]; ok {
			ds = append(ds, c.resolve(st, key, c.lastAt, "dismissed")...)
		}
	}
	return ds
}
