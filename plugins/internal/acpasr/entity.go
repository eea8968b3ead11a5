package acpasr

import (
	"cmp"
	"slices"
	"time"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// entKey is an entity's identity: its kind and its ACP id.
type entKey struct{ kind, id string }

// body is an entity's folded state; parts renders its records, in order.
type body interface {
	parts(s *stream) []part
}

// finisher is a body that can tell it will not change any more in the
// normal course (a tool call with a final status, an exited terminal, an
// answered permission…). Only such entities are released from memory.
type finisher interface{ finished() bool }

// carrier is a body with attributes no update carries (a prompt's origin,
// a compaction's extent), kept across a replay and in a released entity.
type carrier interface {
	carry() (flags uint8, aux uint64)
	restore(flags uint8, aux uint64)
}

// part is one record of an entity (a tool call has a tool_call, file_change
// and tool_result part). key names the part across revisions; lossy lists
// the loss categories that apply once the part is written.
type part struct {
	key   string
	rec   asr.Record
	lossy []string
}

// entity is an upserted ACP object folded across updates (ASR-704). Its
// records are written when it becomes final (ASR-705); a later change is
// written as a record that supersedes the last one (ASR-706).
type entity struct {
	key      entKey
	first    uint64    // ordinal of the frame it was first seen in
	at       time.Time // receipt time of that frame (ASR-707)
	src      string    // replayed: a source time from an update's _meta (ASR-707)
	replayed bool      // its content comes from replayed history
	context  bool      // takes part in the context view
	frames   []uint64  // wire seqs it came from (ASR-723)
	dirty    bool
	written  map[string]writtenPart
	firstID  string // id of its first record
	epoch    int    // the replay its body was folded in (stream.epoch)
	gen      int    // the stream's turn generation when last touched
	since    int    // live updates folded since its last record (Config.PartialEvery)
	b        body
}

// writtenPart remembers a part's last record: its id, and the fingerprint
// of its content, to tell a change from a repeat.
type writtenPart struct {
	id string
	fp asr.Fingerprint
}

// entity returns the entity (kind, id), creating it with mk when new, and
// marks it changed by frame f. Inside a replay, an entity seen before the
// replay is folded afresh: the agent sends its history from the start, so
// the replayed updates rebuild it (ASR-717). An entity released from
// memory comes back with its record ids and fingerprints only.
func (s *stream) entity(kind, id string, context bool, f *sdk.Frame, mk func() body) *entity {
	k := entKey{kind, id}
	var e *entity
	var ok bool
	if s.lastEnt != nil && s.lastEnt.key == k {
		e, ok = s.lastEnt, true
	} else {
		e, ok = s.ents[k]
	}
	switch {
	case !ok:
		if d, ok := s.done[doneKey(k)]; ok {
			e = s.revive(k, d.view(), context, f, mk)
			break
		}
		e = &entity{key: k, first: s.c.ord, at: f.At, replayed: s.replaying, context: context,
			written: map[string]writtenPart{}, epoch: s.epoch, b: mk()}
		if m, ok := e.b.(*message); ok && s.replaying && s.copyFrom != "" {
			m.restore(s.c.recordedFlags(s.copyFrom, k), 0) // a fork copies prompts as prompts
		}
		s.ents[k] = e
		if context {
			s.unwritten = append(s.unwritten, e)
			s.lastCtx = e
		}
	case s.replaying && e.epoch != s.epoch:
		nb := mk()
		if old, ok := e.b.(carrier); ok {
			nb.(carrier).restore(old.carry())
		}
		e.b, e.epoch, e.replayed, e.at, e.src, e.frames = nb, s.epoch, true, f.At, "", nil
		if context {
			s.lastCtx = e
		}
	}
	s.lastEnt = e
	s.touch(e, f.Seq)
	return e
}

// revive brings back an entity released from memory (or recorded on an
// earlier connection) that an update names again. Inside a replay that is
// expected; live, the later updates are folded onto an empty entity, so
// the superseding record holds only what they carry (a diagnostic says so).
func (s *stream) revive(k entKey, d doneView, context bool, f *sdk.Frame, mk func() body) *entity {
	e := &entity{key: k, first: s.c.ord, at: f.At, replayed: s.replaying, context: context,
		written: make(map[string]writtenPart, len(d.parts)), firstID: asr.RecordID(d.first), epoch: s.epoch, b: mk()}
	for _, p := range d.parts {
		e.written[partKey(k.kind, p.code)] = writtenPart{id: asr.RecordID(p.seq), fp: p.fp}
	}
	if c, ok := e.b.(carrier); ok {
		c.restore(d.flags, d.aux)
	}
	if !s.replaying {
		if d.at != 0 {
			e.at = time.UnixMilli(d.at).UTC()
		}
		s.c.diag(sdk.SeverityInfo, s.id, "update for a "+k.kind+" already final and no longer held",
			k.id+": the superseding record holds what the later updates carry, folded onto an empty "+k.kind)
	}
	delete(s.done, doneKey(k))
	s.ents[k] = e
	if context {
		s.lastCtx = e
	}
	return e
}

// lookup returns an existing entity or nil.
func (s *stream) lookup(kind, id string) *entity { return s.ents[entKey{kind, id}] }

// touch records that seq changed e.
func (s *stream) touch(e *entity, seq uint64) {
	e.frames = insertSeq(e.frames, seq)
	e.gen = s.gen
	if n := s.c.cfg.PartialEvery; n > 0 && !s.replaying {
		e.since++
		if e.since == n {
			s.c.ripe = append(s.c.ripe, ripeEnt{s, e})
		}
	}
	if s.replaying && e.src == "" {
		e.src = s.src
	}
	if !e.dirty {
		e.dirty = true
		s.dirty = append(s.dirty, e)
	}
}

// backdate moves e's first sight earlier (a prompt is seen before the
// response that names its message).
func (s *stream) backdate(e *entity, first uint64, at time.Time) {
	if first >= e.first {
		return
	}
	e.first, e.at = first, at
	slices.SortStableFunc(s.unwritten, func(a, b *entity) int { return cmp.Compare(a.first, b.first) })
}

// emitFinal writes e now that it is final (ASR-705). Inside a replay it
// waits for the replayed turn's end: only the replayed final content is
// compared with what was recorded (ASR-717).
func (s *stream) emitFinal(e *entity) {
	if s.replaying {
		return
	}
	s.emit(e)
}

// emit writes e's changed parts. A context entity's first record first
// writes the context entities seen before it that have no record yet, so
// the stream's order of first records is the order of first sight.
func (s *stream) emit(e *entity) {
	if e.context && e.firstID == "" {
		for len(s.unwritten) > 0 && s.unwritten[0].first < e.first {
			s.emitParts(s.unwritten[0])
		}
	}
	s.emitParts(e)
}

// emitParts writes e's changed parts and marks it clean.
func (s *stream) emitParts(e *entity) {
	e.dirty = false
	s.writeParts(e)
}

// ripeEnt is an entity that reached Config.PartialEvery updates since its
// last record in the frame being mapped.
type ripeEnt struct {
	s *stream
	e *entity
}

// snapshotRipe writes a partial snapshot (ASR-705's MAY) of every entity
// that reached Config.PartialEvery live updates since its last record and
// is still open after the frame: the trigger counts frames, never time, so
// that live recording and rebuild stay byte-identical.
//
// While a session/prompt of the stream is unanswered the snapshot waits:
// the prompt's message is known only from the response and goes before
// everything seen after the request (its first sight is the request), so
// a snapshot written earlier would put the agent's reply first. Agents
// answer a prompt when they insert it, before the turn's updates; one that
// answers after the turn gets its snapshots at the answer.
func (c *conn) snapshotRipe() {
	if len(c.ripe) == 0 {
		return
	}
	ripe := c.ripe
	c.ripe = nil
	for _, r := range ripe {
		s, e := r.s, r.e
		if s.replaying || !e.dirty || e.b == nil || e.since < c.cfg.PartialEvery || s.ents[e.key] != e {
			continue // written since, withdrawn, released, or now replaying
		}
		if s.prompts > 0 {
			c.ripe = append(c.ripe, r) // wait for the prompt's answer
			continue
		}
		s.emitPartial(e)
	}
}

// emitPartial writes a snapshot of e before it is final, with status
// "partial" where the record type has one (s.partial tells the bodies).
// e stays dirty, so its final record is still written when it becomes
// final and supersedes the snapshot where they differ (ASR-705, 706). As
// emit does, it first writes the context entities seen before e that have
// no record yet, as snapshots too.
func (s *stream) emitPartial(e *entity) {
	s.partial = true
	defer func() { s.partial = false }()
	if e.context && e.firstID == "" {
		for len(s.unwritten) > 0 && s.unwritten[0].first < e.first {
			u := s.unwritten[0]
			s.writeParts(u)
			s.keepDirty(u)
		}
	}
	s.writeParts(e)
	s.keepDirty(e)
}

// keepDirty keeps e on the list of entities written at the turn's end.
func (s *stream) keepDirty(e *entity) {
	if !e.dirty {
		e.dirty = true
		s.dirty = append(s.dirty, e)
	}
}

// writeParts writes e's parts whose content differs from their last record.
func (s *stream) writeParts(e *entity) {
	e.since = 0
	if i := slices.Index(s.unwritten, e); i >= 0 {
		s.unwritten = slices.Delete(s.unwritten, i, i+1)
	}
	type todo struct {
		p    part
		pre  asr.Prepared // the fingerprint, and the line once it is placed
		prev string
	}
	var tbuf [4]todo // an entity has few parts: kept off the heap
	todos := tbuf[:0]
	var cats []string
	for _, p := range e.b.parts(s) {
		pre, err := asr.Prepare(p.rec)
		if err != nil {
			s.c.diag(sdk.SeverityError, s.id, sdk.SummaryInternal, err.Error())
			continue
		}
		w, had := e.written[p.key]
		if had && w.fp == pre.Fingerprint() {
			pre.Release()
			continue // a repeat, or replayed content equal to the recorded (ASR-717)
		}
		todos = append(todos, todo{p, pre, w.id})
		cats = append(cats, p.lossy...)
	}
	at := sdk.When{At: e.at, Replayed: e.replayed, Source: e.src}
	s.declare(cats, at, e.frames)
	for i := range todos {
		t := &todos[i]
		if s.replaying && e.replayed && s.copyFrom != "" {
			s.markCopy(t.p.rec, e.key, t.p.key)
		}
		fp := t.pre.Fingerprint()
		id, _ := s.writePrepared(t.p.rec, &t.pre, at, e.frames, t.prev)
		if id == "" {
			continue
		}
		e.written[t.p.key] = writtenPart{id: id, fp: fp}
		if e.firstID == "" {
			e.firstID = id
		}
	}
}

// flush writes every changed entity, in order of first sight: the turn
// ended (state_update idle or requires_action), the session closed, or the
// recorder stops (ASR-705).
func (s *stream) flush() {
	list := s.dirty
	s.dirty = nil
	slices.SortStableFunc(list, func(a, b *entity) int { return cmp.Compare(a.first, b.first) })
	for _, e := range list {
		if e.dirty {
			s.emit(e)
		}
	}
}

// releaseAfter is how many turn ends an entity stays held in full after
// its last change (a variable only so that a benchmark can compare with
// keeping everything).
var releaseAfter = 2

// endTurn closes a turn generation and releases what has been final for a
// whole turn: its content is dropped, its record ids and fingerprints are
// kept (doneEnt), so memory grows with the open entities, not with the
// session, and a later change is still a superseding record (ASR-706).
func (s *stream) endTurn() {
	s.gen++
	for k, e := range s.ents {
		if e.dirty || e.firstID == "" || e.gen > s.gen-releaseAfter {
			continue
		}
		if f, ok := e.b.(finisher); !ok || !f.finished() {
			continue
		}
		s.done[doneKey(k)] = compactEntity(e)
		delete(s.ents, k)
		if s.lastEnt == e {
			s.lastEnt = nil
		}
		// Pointers may remain (the last context entity, a compaction's
		// extent): they need only the first record's id.
		e.b, e.frames, e.written = nil, nil, nil
	}
}
