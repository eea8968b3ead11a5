package acpv1

import (
	"strconv"

	"github.com/acptap/acptap/internal/jsonscan"
	"github.com/acptap/acptap/plugins/internal/acpasr"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// session is what the translator keeps of one ACP session: where the
// session's history stands (for derived message ids), the message chunks
// are joining, the prompt being answered, and the mode last reported.
type session struct {
	id string
	// count is the number of messages in the session's history so far
	// (prompts and chunk runs, native ids or derived), the stored
	// stream's included: the next message is number count+1.
	count int
	// A session/load replay counts from 1 again: the agent replays the
	// history from its start. before is the count when it began.
	replaying bool
	before    int
	cur       *message // the message chunks join, until a boundary
	prompt    *pending // the session/prompt waiting for its response
	updates   bool     // updates arrived since that prompt
	mode      string   // the mode last reported or set
}

// message is a message of the session's history as the translator sees
// it: its chunk kind (a prompt counts as user_message_chunk), its id, and
// whether the id was derived.
type message struct {
	kind    string
	id      string
	native  string // the messageId its chunks carry, when they carry one
	derived bool
	prompt  bool // the prompt itself, before any chunk joined it
}

// derivedID is the id of the n-th message of a session's history. It
// depends only on the message's position, so that a session/load replay of
// the history derives the ids recorded live, and a later connection
// continues after the stored stream's messages.
func derivedID(n int) string { return "msg:" + strconv.Itoa(n) }

// promptStarts starts the turn's user message: the prompt, at the next
// position, with a derived id (a v1 prompt response has no messageId).
func (s *session) promptStarts() *message {
	s.count++
	s.cur = &message{kind: "user_message_chunk", id: derivedID(s.count), derived: true, prompt: true}
	s.updates = false
	return s.cur
}

// unPrompt forgets a prompt the agent did not take (an error response
// before any update): it is not in the history, so it takes no position.
func (s *session) unPrompt(m *message) {
	if m != nil && m.id == derivedID(s.count) && m.derived {
		s.count--
	}
}

// turnEnds is the session/prompt response: a message boundary.
func (s *session) turnEnds() {
	s.cur = nil
	s.updates = false
}

// beginReplay starts a session/load replay.
func (s *session) beginReplay() {
	s.replaying = true
	s.before = max(s.before, s.count)
	s.count = 0
	s.cur = nil
}

// endReplay ends it: later messages follow the longer of the replayed and
// the recorded history, so that their ids never name a recorded message.
func (s *session) endReplay() {
	if !s.replaying {
		return
	}
	s.replaying = false
	s.count = max(s.count, s.before)
	s.before = 0
	s.cur = nil
}

// chunk returns the message a message chunk of kind belongs to. native is
// the chunk's messageId ("" when it has none). A new message starts when
// the chunk kind changes, the messageId changes, or a turn ended; a chunk
// without an id continues the message of its kind. prompt says whether
// the stream has a prompt with an id: a replay that reveals a prompt's own
// id (live, v1 prompts have none) takes the id derived live at the same
// position.
func (s *session) chunk(kind, native string, prompt func(id string) bool) *message {
	cur := s.cur
	switch {
	case cur != nil && cur.kind == kind && (native == "" || native == cur.id || native == cur.native):
		cur.prompt = false
		return cur
	case cur != nil && cur.prompt && kind == cur.kind && !s.replaying:
		// The agent echoes the prompt with an id of its own: the echo is
		// the prompt, whose id the engine already has.
		cur.native, cur.prompt = native, false
		return cur
	}
	s.count++
	m := &message{kind: kind, id: native, native: native}
	if d := derivedID(s.count); native == "" || (s.replaying && kind == "user_message_chunk" && prompt(d)) {
		m.id, m.derived = d, true
	}
	s.cur = m
	return m
}

// withMessageHint marks a frame that names m: a derived id is recorded as
// such, and the loss of message boundaries is declared.
func (t *translator) withMessageHint(s *session, f sdk.Frame, m *message) acpasr.Translated {
	tr := acpasr.Translated{Frame: f}
	if m.derived {
		tr.Hint = acpasr.Hint{DerivedID: true, Session: s.id, Lossy: []string{asr.LossV1MessageBoundaries}}
	}
	return tr
}

// withChunkHint is withMessageHint for a message chunk f passed through
// unchanged: when its messageId (native, "" for none) is not m's, the
// engine is given m's in the hint (acpasr.Hint.MessageID) instead of a
// frame rewritten to name it, which it would parse again. That is only
// for a frame whose rewrite is the frame with messageId set
// (regularUpdate), so that the engine sees the same update either way.
func (t *translator) withChunkHint(s *session, f sdk.Frame, native string, m *message) acpasr.Translated {
	tr := t.withMessageHint(s, f, m)
	if native != m.id {
		tr.Hint.MessageID = m.id
	}
	return tr
}

// regularUpdate reports whether f is a session/update whose rewrite with a
// member of its update set (withUpdate) differs from f only in that member
// and in the order of the members on the way down: the JSON the tape
// takes (no duplicate or escaped member names), valid UTF-8, and member
// names on the way down that are written as they are (plainKeys) — the
// fast path's conditions for a frame it takes.
func regularUpdate(f *sdk.Frame) bool {
	var tp jsonscan.Tape
	if !tp.Parse(f.Data) || !tp.ValidUTF8() || !isObject(&tp, tp.Root()) {
		return false
	}
	root := tp.Root()
	params, ok := tp.Member(root, "params")
	if !ok || !isObject(&tp, params) {
		return false
	}
	upd, ok := tp.Member(params, "update")
	if !ok || !isObject(&tp, upd) {
		return false
	}
	return plainKeys(&tp, root, params, upd)
}
