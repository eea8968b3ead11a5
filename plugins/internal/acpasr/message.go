package acpasr

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/acptap/acptap/internal/jsonscan"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// message folds user_message, agent_message and agent_thought upserts and
// their chunks by messageId (ASR-704), and a prompt (ASR-713).
type message struct {
	id, role, origin, author string
	content                  blocks
	contentSeen              bool // a content update or chunk arrived
	fromPrompt               bool // content is the prompt's, not yet the agent's echo
	chunked                  bool // content holds chunks since its last whole update
	thought                  []byte
	hasThought, thoughtChunk bool
	droppedThought           bool // non-text thought content (loss "reasoning")
	derived                  bool // the id is a translator's (idSource "derived")
	meta                     meta
	// An inter-session message received by this session (ASR-735).
	inter bool
	from  string // the sender session, when ACP names it
	// fromMsg is the message's id in the sender's transcript
	// (senderMessageId, Options.MessageRefs).
	fromMsg string
	to      string // the recipient session: this one, or a fork's parent
}

// Flags of a message that no update carries: a prompt's origin and author,
// and an id a translator derived.
const (
	flagPrompt uint8 = 1 << iota
	flagHuman
	flagDerived
)

func (m *message) carry() (uint8, uint64) {
	var f uint8
	if m.derived {
		f |= flagDerived
	}
	if m.origin == "prompt" {
		f |= flagPrompt
		if m.author == "human" {
			f |= flagHuman
		}
	}
	return f, 0
}

func (m *message) restore(f uint8, _ uint64) {
	if f&flagDerived != 0 {
		m.derived = true
	}
	if f&flagPrompt != 0 {
		m.origin = "prompt"
		if f&flagHuman != 0 {
			m.author = "human"
		}
	}
}

func (m *message) finished() bool { return true }

func (m *message) parts(s *stream) []part {
	content := []json.RawMessage{}
	if m.hasThought {
		content = append(content, textPart("reasoning", string(m.thought)))
	}
	content = append(content, m.content.list()...)
	if n := m.content.textLen(); n > 0 {
		s.textHint = n // the next message's text block makes room for as much
	}
	asm := asr.AssemblyFolded
	if m.chunked || m.thoughtChunk {
		asm = asr.AssemblyChunks
	}
	rec := &asr.Message{
		Envelope:   asr.Envelope{Type: asr.TypeMessage},
		MessageID:  m.id,
		IDSource:   m.idSource(),
		Role:       m.role,
		Origin:     m.origin,
		Author:     m.author,
		Content:    content,
		Provenance: asr.Provenance{Assembly: asm, Meta: m.meta.out()},
	}
	if m.inter {
		if m.from != "" {
			rec.From = &asr.SessionRef{Session: m.from, MessageID: m.fromMsg}
		}
		rec.Recipients = []asr.Recipient{{Actor: asr.SessionRef{Session: m.to}}}
	}
	var lossy []string
	if m.droppedThought {
		lossy = []string{asr.LossReasoning}
	}
	return []part{{key: asr.TypeMessage, rec: rec, lossy: lossy}}
}

func (m *message) idSource() string {
	if m.derived {
		return "derived"
	}
	return ""
}

// messageUpdate maps the six message kinds; false means the update was
// malformed (the caller keeps it as an audit record).
func (s *stream) messageUpdate(f *sdk.Frame, kind string, u obj) bool {
	id, st := s.c.hint.MessageID, valid
	if id == "" {
		id, st = u.str("messageId")
	}
	if st != valid {
		s.c.diag(sdk.SeverityWarning, s.id, kind+": messageId missing or not a string", "kept as an audit record")
		return false
	}
	role := "assistant"
	if strings.HasPrefix(kind, "user_") {
		role = "user"
	}
	thought := strings.HasPrefix(kind, "agent_thought")
	chunk := strings.HasSuffix(kind, "_chunk")
	var block json.RawMessage
	var bo obj // block, parsed
	var text json.RawMessage
	var plain bool // bo is a plain text block, of text (plainTextOf)
	var items []json.RawMessage
	contentSt := missing
	if chunk {
		var ok bool
		// A thought keeps only its text (other blocks are the loss
		// "reasoning"), so any object will do.
		if block, ok = u.get("content"); ok && isObject(block) {
			bo, _ = u.object("content")
		}
		if !thought {
			text, plain = plainTextOf(bo) // a plain text block has no problem
		}
		if !ok || bo == nil || (!thought && !plain && blockProblemOf(bo) != "") {
			s.c.diag(sdk.SeverityWarning, s.id, kind+": content is not a content block", "kept as an audit record")
			return false
		}
	} else {
		items, contentSt = u.array("content")
		if contentSt == invalid {
			s.c.diag(sdk.SeverityWarning, s.id, kind+": content is not an array", "kept as an audit record")
			return false
		}
		if thought {
			items = s.objectsOnly(kind, items)
		} else {
			items = s.blocksOnly(kind, items)
		}
	}
	e := s.entity(asr.TypeMessage, id, true, f, func() body { return &message{id: id, role: role} })
	m := e.b.(*message)
	m.derived = m.derived || s.c.hint.DerivedID
	if m.role != role {
		s.c.diag(sdk.SeverityWarning, s.id, "messageId used for both user and assistant content", "the role first seen is kept")
	}
	if m.inter {
		s.c.diag(sdk.SeverityWarning, s.id, "messageId used for both an inter-session message and "+kind, "folded into the inter-session message")
	}
	switch {
	case thought && chunk:
		m.addThoughtOf(bo)
		m.thoughtChunk = true
	case thought && contentSt != missing:
		m.thought, m.hasThought, m.thoughtChunk = nil, false, false
		for _, b := range items {
			m.addThought(b)
		}
	case chunk:
		m.agentContent()
		m.content.hint = s.textHint
		m.content.chunkText(block, text, plain)
		m.chunked = true
	case contentSt != missing: // a whole update; null and [] clear
		m.agentContent()
		m.content.set(items)
		m.chunked = false
	}
	if !chunk {
		m.meta.fold(s, u)
	}
	return true
}

// agentContent notes that the agent sent content: it replaces a prompt's
// content instead of being appended to it.
func (m *message) agentContent() {
	if m.fromPrompt {
		m.content.set(nil)
		m.fromPrompt = false
	}
	m.contentSeen = true
}

// addThought appends a thought block's text; other blocks are dropped and
// declared as the "reasoning" loss.
func (m *message) addThought(b json.RawMessage) {
	o, _ := parseObj(b)
	m.addThoughtOf(o)
}

// addThoughtOf is addThought of a block parsed as o (nil: not an object):
// the text is decoded onto the thought's.
func (m *message) addThoughtOf(o obj) {
	if typ, _ := o.str("type"); typ == "text" {
		if v, st := o.member("text"); st == valid {
			if t, ok := jsonscan.AppendString(m.thought, v); ok {
				m.thought = t
				m.hasThought = true
				return
			}
		}
	}
	m.droppedThought = true
}

// prompt joins a session/prompt request to the messageId its response
// gives (ASR-713): a user message with origin "prompt". The prompt's blocks
// are its content unless the agent's echo (user_message) already gave some.
func (s *stream) prompt(f *sdk.Frame, p *pending, id string) {
	e := s.entity(asr.TypeMessage, id, true, f, func() body { return &message{id: id, role: "user"} })
	s.backdate(e, p.ord, p.at)
	e.frames = insertSeq(e.frames, p.seq)
	m := e.b.(*message)
	if m.role != "user" {
		s.c.diag(sdk.SeverityWarning, s.id, "prompt messageId names an assistant message", "the role first seen is kept")
	}
	m.origin = "prompt"
	m.derived = m.derived || s.c.hint.DerivedID
	if s.c.cfg.HumanPrompts {
		m.author = "human"
	}
	if !m.contentSeen {
		m.content.set(p.prompt)
		m.fromPrompt = true
	}
}

// withdraw forgets a prompt the agent did not take (Hint.Withdraw), unless
// it already has a record.
func (s *stream) withdraw(id string) {
	e := s.lookup(asr.TypeMessage, id)
	if e == nil {
		return
	}
	if e.firstID != "" {
		s.c.diag(sdk.SeverityWarning, s.id, "a withdrawn prompt was already recorded", id+": its record stays")
		return
	}
	delete(s.ents, e.key)
	if s.lastEnt == e {
		s.lastEnt = nil
	}
	s.unwritten = slices.DeleteFunc(s.unwritten, func(x *entity) bool { return x == e })
	s.dirty = slices.DeleteFunc(s.dirty, func(x *entity) bool { return x == e })
	if s.lastCtx == e {
		s.lastCtx = nil
	}
}

// objectsOnly drops array items that are not JSON objects, with a diagnostic.
func (s *stream) objectsOnly(what string, items []json.RawMessage) []json.RawMessage {
	out := items[:0:0]
	for _, x := range items {
		if isObject(x) {
			out = append(out, x)
		}
	}
	if len(out) != len(items) {
		s.c.diag(sdk.SeverityWarning, s.id, what+": items that are not objects dropped", "")
	}
	return out
}

// objectArray is items as one JSON array, without the items that are not
// objects (reported with a diagnostic): ASR's options, entries and config
// options are arrays of objects.
func (s *stream) objectArray(what string, raw json.RawMessage, items []json.RawMessage) json.RawMessage {
	kept := s.objectsOnly(what, items)
	if len(kept) == len(items) {
		return compact(raw)
	}
	b, _ := json.Marshal(kept)
	return compact(b)
}

// isObject reports whether x, a member of a frame already known to be JSON
// (parseRPC), is an object: its first byte says so, without splitting it.
func isObject(x json.RawMessage) bool {
	if len(x) > 0 && x[0] == '{' {
		return true // a frame's members start with their value
	}
	x = bytes.TrimLeft(x, " \t\r\n")
	return len(x) > 0 && x[0] == '{'
}
