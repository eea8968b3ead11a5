package aep

import (
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/aep"
)

// response maps a response joined to its request p. It reads the result
// or error only for the methods of resultRead (fast.go): a method added
// here that reads them goes there too.
func (c *conn) response(f *sdk.Frame, m msg, p *pending) []*draft {
	sid := p.session
	switch p.method {
	case "session/new", "session/fork":
		if m.kind != kindResult {
			return nil
		}
		id, _ := str(m.result, "sessionId")
		if id == "" {
			c.diag(sdk.SeverityWarning, "", "session/new response without a sessionId", "", f.Seq)
			return nil
		}
		var parent string
		if p.method == "session/fork" {
			parent = sid
		}
		return []*draft{c.sessionStarted(c.session(id), p, parent, m)}
	case "session/load", "session/resume":
		st := c.session(sid)
		if st.replaying > 0 {
			st.replaying--
		}
		if m.kind != kindResult {
			return nil
		}
		return []*draft{c.sessionStarted(st, p, "", m)}
	case "session/prompt":
		return c.promptResponse(f, c.session(sid), m, p)
	case "session/close", "session/delete", "session/archive":
		st := c.session(sid)
		if m.kind != kindResult {
			return nil
		}
		if p.method == "session/archive" && (!c.archiveCloses || !st.opened) {
			return nil // an archive that closes nothing: its request was x.acp.session.archive
		}
		ds := c.dismissAll(st)
		if st.ended {
			return ds // a session ends once, across all epochs
		}
		st.ended = true
		d := c.newDraft(st, "session.ended", "info")
		d.run, d.data = "", obj{"reason": "normal"}
		d.tp = traceparent(p.params)
		return append(ds, d)
	case "session/request_permission":
		return c.permissionOutcome(f, c.session(sid), m, p)
	case "elicitation/create":
		return c.elicitationOutcome(f, c.session(sid), m, p)
	}
	return nil
}

// sessionStarted is session.started: the client, and from redacted up the
// working directory of the request.
func (c *conn) sessionStarted(st *sess, p *pending, parent string, m msg) *draft {
	st.opened = true
	d := c.newDraft(st, "session.started", "info")
	d.run = ""
	d.data = obj{"client": obj{"name": Agent}}
	if parent != "" {
		d.data["parent"] = obj{"session": parent}
	}
	if cwd, ok := str(p.params, "cwd"); ok && cwd != "" {
		switch d.level {
		case aep.Redacted:
			d.data["cwd"] = c.s.redactor.Text(cwd)
		case aep.Full:
			d.data["cwd"] = cwd
		}
	}
	d.tp = traceparent(p.params, m.result)
	return d
}

// promptResponse ends a v1 turn by its stopReason (a JSON-RPC error fails
// it); in v2 the response only says the prompt was inserted, and an error
// means it never ran.
func (c *conn) promptResponse(f *sdk.Frame, st *sess, m msg, p *pending) []*draft {
	if c.v2 {
		if m.kind == kindError {
			for i, u := range st.unbound {
				if u.rpcID == m.id {
					st.unbound = append(st.unbound[:i], st.unbound[i+1:]...)
					break
				}
			}
		}
		return nil
	}
	var typ, sev string
	var data obj
	lvl := c.level("run.failed")
	if m.kind == kindError {
		typ, sev, data = "run.failed", "error", obj{"reason": "error", "error": c.rpcError(m.errObj, lvl)}
	} else {
		stop, has := str(m.result, "stopReason")
		typ, sev, data = c.stopTerminal(stop, has, nil, lvl)
		if typ == "run.finished" {
			usageTokens(data, child(m.result, "usage"))
		}
	}
	d := c.runTerminal(st, p.run, typ, sev, data, f.At)
	if d == nil {
		return nil
	}
	d.tp = traceparent(m.result)
	return []*draft{d}
}
