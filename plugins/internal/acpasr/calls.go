package acpasr

import (
	"strings"

	"github.com/acptap/acptap/sdk"
)

// method is how one ACP method is mapped: call handles the request or
// notification and returns what to remember until the response (nil:
// nothing); reply handles the response. dir 0 means either direction.
type method struct {
	dir   sdk.Direction
	call  func(c *conn, f *sdk.Frame, m rpcMsg) *pending
	reply func(c *conn, f *sdk.Frame, m rpcMsg, p *pending)
}

// methodFor returns the mapping of an ACP v2 (alpha.9) method. Methods that
// carry nothing for ASR are known with nil handlers.
func methodFor(name string) (method, bool) {
	switch name {
	case "initialize":
		return method{sdk.C2A, remember, (*conn).initialized}, true
	case "session/new":
		return method{sdk.C2A, (*conn).newSession, (*conn).sessionCreated}, true
	case "session/resume":
		return method{sdk.C2A, (*conn).resumeSession, (*conn).sessionResumed}, true
	case "session/fork":
		return method{sdk.C2A, (*conn).forkSession, (*conn).sessionForked}, true
	case "session/close":
		return method{sdk.C2A, (*conn).closeSession, (*conn).sessionClosed}, true
	case "session/prompt":
		return method{sdk.C2A, (*conn).promptSession, (*conn).prompted}, true
	case "session/update":
		return method{sdk.A2C, (*conn).sessionUpdate, nil}, true
	case "session/request_permission":
		return method{sdk.A2C, (*conn).permissionAsked, (*conn).permissionAnswered}, true
	case "elicitation/create":
		return method{sdk.A2C, (*conn).elicitationAsked, (*conn).elicitationAnswered}, true
	case "elicitation/complete":
		return method{sdk.A2C, (*conn).elicitationComplete, nil}, true
	case "session/cancel", "session/list", "session/delete", "session/set_config_option",
		"auth/login", "auth/logout", "providers/list", "providers/set", "providers/disable":
		// session/cancel's effect arrives as a state_update; the others
		// do not change a session's record.
		return method{dir: sdk.C2A}, true
	case "mcp/message", "$/cancel_request":
		return method{}, true
	}
	return method{}, false
}

func remember(*conn, *sdk.Frame, rpcMsg) *pending { return &pending{} }

// call handles a request or notification.
func (c *conn) call(f *sdk.Frame, m rpcMsg) {
	def, ok := methodFor(m.method)
	switch {
	case !ok && strings.HasPrefix(m.method, "_"):
		c.diag(sdk.SeverityInfo, "", "vendor method not mapped", m.method)
		return
	case !ok:
		c.diag(sdk.SeverityWarning, "", "unknown method", m.method)
		return
	case def.dir != 0 && def.dir != f.Dir:
		c.diag(sdk.SeverityWarning, "", "method sent in the wrong direction", m.method+" from "+f.Dir.String())
		return
	}
	if m.paramsBad {
		c.diag(sdk.SeverityWarning, "", "params is not an object", m.method)
	}
	if def.call == nil {
		return
	}
	p := def.call(c, f, m)
	if p == nil || m.kind != rpcRequest {
		return
	}
	p.method, p.seq, p.at, p.ord, p.id = m.method, f.Seq, f.At, c.ord, m.id
	k := pendingKey{f.Seq, string(m.id)}
	if old, ok := c.pending[k]; ok {
		old.answered() // a batch repeating an id: the first is forgotten
	}
	c.pending[k] = p
	if p.method == "session/prompt" && p.s != nil {
		p.s.prompts++
	}
}

// answered forgets the request's part in its stream's bookkeeping.
func (p *pending) answered() {
	if p.method == "session/prompt" && p.s != nil {
		p.s.prompts--
	}
}

// reply handles a response, joined to its request by the host (ReplyTo).
func (c *conn) reply(f *sdk.Frame, m rpcMsg) {
	if f.ReplyTo == 0 {
		c.diag(sdk.SeverityWarning, "", "response without request", "id "+string(m.id))
		return
	}
	k := pendingKey{f.ReplyTo, string(m.id)}
	p, ok := c.pending[k]
	if !ok {
		return // a request this mapper does not follow
	}
	delete(c.pending, k)
	p.answered()
	if def, _ := methodFor(p.method); def.reply != nil {
		def.reply(c, f, m, p)
	}
}
