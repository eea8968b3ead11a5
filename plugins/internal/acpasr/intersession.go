// ACP-unstable associations between sessions: subagents (ASR-721) and
// inter-session messages (ASR-735).

package acpasr

import (
	"cmp"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// subagent is a subagent_update's association of a child session with the
// session it was sent in (ASR-721). ACP alpha.9 has no field linking it to
// a tool call; a toolCallId member, if an agent sends one, is the callId.
// Title, description, capabilities and the mirrored state are not mapped
// (the wire log keeps them). An association does not end, so it is never
// released from memory.
type subagent struct {
	child, callID string
	meta          meta
}

func (a *subagent) parts(*stream) []part {
	return []part{{key: asr.TypeSubagent, rec: &asr.Subagent{
		Envelope:     asr.Envelope{Type: asr.TypeSubagent},
		ChildSession: a.child,
		CallID:       a.callID,
		Provenance:   asr.Provenance{Meta: a.meta.out()},
	}}}
}

// subagentUpdate writes the subagent record at once, so it precedes any
// traffic of the child this connection records, and notes the parent: the
// child's stream, when opened, carries lineage.spawnedBy. The parent is
// only ever the session the update came in; it is never guessed.
func (s *stream) subagentUpdate(f *sdk.Frame, u obj) bool {
	child, st := u.id("sessionId")
	if st != valid {
		s.c.diag(sdk.SeverityWarning, s.id, "subagent_update: sessionId missing or not a string", "kept as an audit record")
		return false
	}
	if child == s.id {
		s.c.diag(sdk.SeverityWarning, s.id, "subagent_update names its own session as the child", "kept as an audit record")
		return false
	}
	c := s.c
	switch parent, ok := c.spawned[child]; {
	case !ok:
		c.spawned[child] = s.id
	case parent != s.id && !(s.replaying && parent == s.copyFrom):
		// (A fork's replay copies its parent's associations: no news.)
		c.diag(sdk.SeverityWarning, s.id, "subagent already associated with another session",
			child+" was first associated with "+parent+": its lineage keeps that parent")
	}
	if cs, open := c.streams[child]; open && !cs.spawned {
		c.diag(sdk.SeverityWarning, child, "child traffic recorded before its subagent association",
			"the stream was opened before the subagent_update: its header has no lineage.spawnedBy")
	} else if p, known := c.prior[child]; known && p.header != nil && (p.header.Lineage == nil || p.header.Lineage.SpawnedBy == nil) {
		c.diag(sdk.SeverityWarning, child, "child stream already stored without lineage.spawnedBy", "its header is not rewritten")
	}
	if _, st := u.str("cwd"); st == valid && c.opts.SubagentRoots {
		if _, open := c.streams[child]; !open {
			if c.childRoots == nil {
				c.childRoots = map[string][]string{}
			}
			c.childRoots[child] = c.roots("subagent_update", u)
		}
	}
	e := s.entity(asr.TypeSubagent, child, false, f, func() body { return &subagent{child: child} })
	a := e.b.(*subagent)
	s.patchStr("subagent_update", u, "toolCallId", &a.callID)
	a.meta.fold(s, u)
	s.emitFinal(e)
	return true
}

// sessionMessage maps session_message and session_message_chunk (ASR-735).
// In the receiving session it is a message (role user, author agent, origin
// inter_session) folded by messageId, chunks included (decision 7); in the
// sending session the update is an audit-only record (ASR-710). ACP's
// messageId is the message's id in the session the update came in, so
// only that session's side is ever written: no session or message id is
// invented. At alpha.9 an omitted or null sender or recipient keeps the
// value known for the message.
func (s *stream) sessionMessage(f *sdk.Frame, kind string, u obj, raw json.RawMessage) bool {
	id, st := u.str("messageId")
	if st != valid {
		s.c.diag(sdk.SeverityWarning, s.id, kind+": messageId missing or not a string", "kept as an audit record")
		return false
	}
	sender, sst := u.id("senderSessionId")
	recipient, rst := u.id("recipientSessionId")
	if sst == invalid || rst == invalid {
		s.c.diag(sdk.SeverityWarning, s.id, kind+": senderSessionId or recipientSessionId is not a session id", "treated as absent")
	}
	var known *message
	if e := s.lookup(asr.TypeMessage, id); e != nil {
		known, _ = e.b.(*message)
		if known != nil && !known.inter {
			s.c.diag(sdk.SeverityWarning, s.id, kind+": messageId already names a message of this session", "kept as an audit record")
			return false
		}
	}
	if sst != valid && known != nil {
		sender = known.from
	}
	if rst != valid && known != nil {
		recipient = known.to
	}
	chunk := kind == "session_message_chunk"
	if chunk && s.c.opts.HoldChunks && known == nil && !s.outbound[id] && sender == "" && recipient == "" &&
		blockProblem(u.raw("content")) == "" {
		s.hold(f, id, raw)
		return true
	}
	var held []heldChunk // chunks of this message that came before its first upsert
	if !chunk {
		if held = s.held[id]; len(held) > 0 {
			delete(s.held, id)
			s.heldN -= len(held)
		}
	}
	switch {
	case sender == s.id || s.outbound[id]:
		// The sending side: recorded as the update itself (ASR-735, ASR-710).
		s.outbound[id] = true
		s.auditHeld(held)
		return false
	case recipient == s.id, recipient == "" && sender != "":
	case s.replaying && s.copyFrom != "" && recipient == s.copyFrom:
		// A fork's copy of a message its parent received: the same
		// record as the parent's.
	default:
		s.c.diag(sdk.SeverityWarning, s.id, kind+" names neither this session as its recipient nor as its sender",
			"kept as an audit record (sender "+strconv.Quote(sender)+", recipient "+strconv.Quote(recipient)+")")
		s.auditHeld(held)
		return false
	}
	var block json.RawMessage
	var items []json.RawMessage
	contentSt := missing
	if chunk {
		var ok bool
		if block, ok = u.get("content"); !ok || blockProblem(block) != "" {
			s.c.diag(sdk.SeverityWarning, s.id, kind+": content is not a content block", "kept as an audit record")
			return false
		}
	} else {
		items, contentSt = u.array("content")
		if contentSt == invalid {
			s.c.diag(sdk.SeverityWarning, s.id, kind+": content is not an array", "kept as an audit record")
			return false
		}
		items = s.blocksOnly(kind, items)
	}
	if recipient == "" {
		recipient = s.id
	}
	mk := func() body {
		return &message{id: id, role: "user", author: "agent", origin: "inter_session", inter: true, to: recipient}
	}
	for i, h := range held {
		// The chunks came first: the message begins at the first of
		// them, and holds them before the upsert's patch.
		e := s.entity(asr.TypeMessage, id, true, &h.frame, mk)
		if i == 0 {
			s.backdate(e, h.ord, h.frame.At)
		}
		m := e.b.(*message)
		m.content.chunk(h.block)
		m.chunked, m.contentSeen = true, true
	}
	e := s.entity(asr.TypeMessage, id, true, f, mk)
	m := e.b.(*message)
	if rst == valid {
		m.to = recipient
	}
	if sst == valid {
		m.from = sender
	} else if m.from == "" && sender != "" {
		m.from = sender
	}
	switch {
	case chunk:
		m.content.chunk(block)
		m.chunked, m.contentSeen = true, true
	case contentSt != missing: // null and [] clear
		m.content.set(items)
		m.chunked, m.contentSeen = false, true
	}
	if !chunk {
		m.meta.fold(s, u)
		if s.c.opts.MessageRefs {
			switch v, st := u.str("senderMessageId"); st {
			case valid:
				m.fromMsg = v
			case isNull:
				m.fromMsg = ""
			case invalid:
				s.c.diag(sdk.SeverityWarning, s.id, kind+": senderMessageId is not a string", "treated as absent")
			}
		}
	}
	if m.from == "" {
		s.c.diag(sdk.SeverityInfo, s.id, kind+": the sender session is not named", "the message has no from")
	}
	return true
}

// heldChunk is a session_message_chunk waiting for an upsert of its
// message (Options.HoldChunks).
type heldChunk struct {
	frame sdk.Frame // Data dropped: raw is the update
	raw   json.RawMessage
	block json.RawMessage
	ord   uint64
}

// maxHeld bounds the chunks a stream holds; past it they are all
// released as audit records.
const maxHeld = 4096

// hold keeps a chunk whose message no upsert has named yet.
func (s *stream) hold(f *sdk.Frame, id string, raw json.RawMessage) {
	if s.held == nil {
		s.held = map[string][]heldChunk{}
	}
	var u struct {
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(raw, &u)
	g := *f
	g.Data = nil
	s.held[id] = append(s.held[id], heldChunk{frame: g, raw: compact(raw), block: compact(u.Content), ord: s.c.ord})
	s.heldN++
	if s.heldN > maxHeld {
		s.c.diag(sdk.SeverityWarning, s.id, "session_message_chunks held past the bound", "released as audit records: no upsert named their messages")
		s.releaseHeld()
	}
}

// releaseHeld writes every held chunk as an audit record, in the order
// they arrived (the connection ends, or the bound is reached).
func (s *stream) releaseHeld() {
	var all []heldChunk
	for _, h := range s.held {
		all = append(all, h...)
	}
	slices.SortFunc(all, func(a, b heldChunk) int { return cmp.Compare(a.ord, b.ord) })
	s.held, s.heldN = nil, 0
	s.auditHeld(all)
}

func (s *stream) auditHeld(held []heldChunk) {
	for i := range held {
		s.audit(&held[i].frame, "session_message_chunk", held[i].raw)
	}
}
