package aep

import (
	"strconv"

	"github.com/acptap/acptap/sdk"
)

// request maps a request or notification (either direction). Of params it
// reads only sessionId and _meta but for the methods of paramsRead
// (fast.go): a method added here that reads more goes there too.
func (c *conn) request(f *sdk.Frame, m msg) []*draft {
	sid := c.sessionOf(m.params)
	switch m.method {
	case "session/prompt":
		if f.Dir != sdk.C2A {
			break
		}
		st := c.session(sid)
		p := &prompt{rpcID: m.id, at: f.At, params: m.params}
		if c.v2 {
			st.unbound = append(st.unbound, p)
			return nil
		}
		run := runID(st.epoch, m.id)
		if p := c.pending[pendKey{f.Dir, m.id}]; p != nil && m.kind == kindRequest {
			p.run = run
		}
		return []*draft{c.runStarted(st, run, "user", p, f.At)}
	case "session/new", "session/fork":
		return nil // the response starts the session
	case "session/load", "session/resume":
		// The agent replays history (and, v2, a state snapshot) before it
		// answers: observed, not new activity.
		c.session(sid).replaying++
		return nil
	case "session/close", "session/delete":
		return nil // the response ends the session
	case "session/update":
		if f.Dir != sdk.A2C || m.params == nil {
			break
		}
		u := child(m.params, "update")
		if u == nil {
			c.diag(sdk.SeverityWarning, sid, "session/update without an update object", "", f.Seq)
			return nil
		}
		return c.update(f, c.session(sid), u, m.params)
	case "session/request_permission":
		if f.Dir == sdk.A2C && m.kind == kindRequest {
			return c.permission(f, c.session(sid), m)
		}
	case "elicitation/create":
		if f.Dir == sdk.A2C && m.kind == kindRequest {
			return c.elicitation(f, m)
		}
	case "elicitation/complete":
		if id, ok := str(m.params, "elicitationId"); ok {
			if sid == "" {
				sid = c.elicit[id]
			}
			delete(c.elicit, id) // a URL-mode elicitation completes once
		}
	}
	st := c.session(sid)
	d := c.newDraft(st, vendorType(m.method), "debug")
	d.data = obj{}
	d.tp = traceparent(m.params)
	return []*draft{d}
}

// runID is the run of a prompt turn: the session/prompt request's
// JSON-RPC id, qualified by the epoch so that two tee processes observing
// one session never mint the same run.
func runID(epoch int64, rpcID string) string {
	return strconv.FormatInt(epoch, 10) + "-" + runToken(rpcID)
}
