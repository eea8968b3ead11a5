package acpasr

import (
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// initialized takes agent.name and agent.version from the initialize
// response's info (ASR-703). Capabilities are not recorded.
func (c *conn) initialized(f *sdk.Frame, m rpcMsg, _ *pending) {
	if m.kind == rpcError {
		return
	}
	info, _ := m.result.object("info")
	name, st := info.str("name")
	if st != valid {
		c.diag(sdk.SeverityWarning, "", "initialize response has no info.name", "agent.name falls back to the config or is left out")
		return
	}
	version, _ := info.str("version")
	c.agent = &agentInfo{name: name, version: version, seq: f.Seq}
}

// roots reads cwd and additionalDirectories (ASR-711). mcpServers is never
// read: its env, headers and args may hold credentials (ASR-712).
func (c *conn) roots(what string, params obj) []string {
	var roots []string
	if cwd, st := params.str("cwd"); st == valid {
		roots = append(roots, cwd)
	} else {
		c.diag(sdk.SeverityWarning, "", what+": cwd missing or not a string", "the stream has no workspace roots")
		return nil
	}
	dirs, st := params.array("additionalDirectories")
	if st == invalid {
		c.diag(sdk.SeverityWarning, "", what+": additionalDirectories is not an array", "ignored")
	}
	for _, d := range dirs {
		p, ok := asString(d)
		if !ok {
			c.diag(sdk.SeverityWarning, "", what+": an additional directory is not a string", "skipped")
			continue
		}
		roots = append(roots, p)
	}
	return roots
}

func (c *conn) newSession(_ *sdk.Frame, m rpcMsg) *pending {
	return &pending{roots: c.roots("session/new", m.params)}
}

// sessionCreated opens the new session's stream (ASR-701).
func (c *conn) sessionCreated(f *sdk.Frame, m rpcMsg, p *pending) {
	if m.kind == rpcError {
		return
	}
	id, st := m.result.str("sessionId")
	if st != valid || id == "" {
		c.diag(sdk.SeverityWarning, "", "session/new response has no sessionId", "no stream opened")
		return
	}
	if _, dup := c.streams[id]; dup {
		c.diag(sdk.SeverityWarning, id, "session/new returned a session already open", "the open stream is kept")
		return
	}
	c.open(id, p.roots, f.At, []uint64{p.seq, f.Seq}, nil)
}

// resumeSession opens (or continues) the stream. With replayFrom, the
// agent replays history before it answers: a replay (ASR-707, ASR-717).
func (c *conn) resumeSession(f *sdk.Frame, m rpcMsg) *pending {
	id, st := m.params.id("sessionId")
	if st != valid {
		c.diag(sdk.SeverityWarning, "", "session/resume without a sessionId", "ignored")
		return nil
	}
	roots := c.roots("session/resume", m.params)
	s, ok := c.streams[id]
	if !ok {
		s = c.open(id, roots, f.At, []uint64{f.Seq}, nil)
	}
	if _, st := m.params.member("replayFrom"); st == valid {
		s.beginReplay()
	}
	return &pending{s: s}
}

// sessionResumed ends the replay, then writes state "resumed".
func (c *conn) sessionResumed(f *sdk.Frame, m rpcMsg, p *pending) {
	p.s.endReplay(f.At, []uint64{f.Seq})
	if m.kind == rpcError {
		return
	}
	p.s.record(&asr.State{Envelope: asr.Envelope{Type: asr.TypeState}, State: "resumed"}, f, p.seq, f.Seq)
}

func (c *conn) forkSession(_ *sdk.Frame, m rpcMsg) *pending {
	parent, st := m.params.id("sessionId")
	if st != valid {
		c.diag(sdk.SeverityWarning, "", "session/fork without a sessionId", "ignored")
		return nil
	}
	return &pending{parent: parent, roots: c.roots("session/fork", m.params)}
}

// sessionForked opens the fork's stream with its lineage (ASR-718).
func (c *conn) sessionForked(f *sdk.Frame, m rpcMsg, p *pending) {
	if m.kind == rpcError {
		return
	}
	id, st := m.result.str("sessionId")
	if st != valid || id == "" {
		c.diag(sdk.SeverityWarning, "", "session/fork response has no sessionId", "no stream opened")
		return
	}
	lineage := &asr.Lineage{
		ForkedFrom: &asr.SessionLink{Session: p.parent, Evidence: asr.EvidenceNativeField},
		Inherits:   &asr.Inherits{Mode: "copied", From: p.parent, Evidence: asr.EvidenceNativeField},
	}
	c.open(id, p.roots, f.At, []uint64{p.seq, f.Seq}, lineage)
}

func (c *conn) closeSession(_ *sdk.Frame, m rpcMsg) *pending {
	id, st := m.params.id("sessionId")
	if st != valid {
		c.diag(sdk.SeverityWarning, "", "session/close without a sessionId", "ignored")
		return nil
	}
	s, ok := c.streams[id]
	if !ok {
		c.diag(sdk.SeverityWarning, id, "session/close for a session not seen", "ignored")
		return nil
	}
	return &pending{s: s}
}

// sessionClosed writes what is still open, then state "ended" (ASR-705).
func (c *conn) sessionClosed(f *sdk.Frame, m rpcMsg, p *pending) {
	if m.kind == rpcError {
		return
	}
	p.s.endReplay(f.At, []uint64{f.Seq})
	p.s.flush()
	p.s.endTurn()
	p.s.record(&asr.State{Envelope: asr.Envelope{Type: asr.TypeState}, State: "ended"}, f, p.seq, f.Seq)
}

func (c *conn) promptSession(f *sdk.Frame, m rpcMsg) *pending {
	id, st := m.params.id("sessionId")
	if st != valid {
		c.diag(sdk.SeverityWarning, "", "session/prompt without a sessionId", "ignored")
		return nil
	}
	s := c.streamFor(id, f)
	items, st := m.params.array("prompt")
	if st != valid {
		c.diag(sdk.SeverityWarning, id, "session/prompt: prompt is not an array", "the message gets no content from the prompt")
	}
	return &pending{s: s, prompt: ownAll(s.blocksOnly("session/prompt", items))}
}

// prompted maps the prompt once the response gives its messageId (ASR-713);
// a JSON-RPC error means the message was not inserted: no message record,
// but the failure is kept, as an audit-only record with the error response
// verbatim (ASR-710's form), so that a prompt refused (authentication
// required, a bad request) is not invisible in the stream.
func (c *conn) prompted(f *sdk.Frame, m rpcMsg, p *pending) {
	if m.kind == rpcError {
		c.ord++
		p.s.record(&asr.Audit{
			Envelope:   asr.Envelope{Type: asr.AuditPrefix + asr.AuditPromptError},
			Provenance: asr.Provenance{Native: &asr.Native{Record: compact(f.Data)}},
		}, f)
		return
	}
	id, st := m.result.str("messageId")
	if st != valid {
		c.diag(sdk.SeverityWarning, p.s.id, "session/prompt response has no messageId", "the prompt is not recorded")
		return
	}
	p.s.prompt(f, p, id)
}
