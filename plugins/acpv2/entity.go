package acpv2

import (
	"cmp"
	"crypto/sha256"
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
	replayed bool      // first seen in replayed history
	context  bool      // takes part in the context view
	frames   []uint64  // wire seqs it came from (ASR-723)
	dirty    bool
	written  map[string]writtenPart
	firstID  string // id of its first record
	b        body
}

// writtenPart remembers a part's last record: its id, and a digest of the
// record without seq, id, times and native, to tell a change from a repeat.
type writtenPart struct {
	id    string
	canon [sha256.Size]byte
}

// entity returns the entity (kind, id), creating it with mk when new, and
// marks it changed by frame f.
func (s *stream) entity(kind, id string, context bool, f *sdk.Frame, mk func() body) *entity {
	k := entKey{kind, id}
	e, ok := s.ents[k]
	if !ok {
		e = &entity{key: k, first: s.c.ord, at: f.At, replayed: s.replaying, context: context,
			written: map[string]writtenPart{}, b: mk()}
		s.ents[k] = e
		if context {
			s.unwritten = append(s.unwritten, e)
			s.lastCtx = e
		}
	}
	s.touch(e, f.Seq)
	return e
}

// lookup returns an existing entity or nil.
func (s *stream) lookup(kind, id string) *entity { return s.ents[entKey{kind, id}] }

// touch records that seq changed e.
func (s *stream) touch(e *entity, seq uint64) {
	e.frames = insertSeq(e.frames, seq)
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

func (s *stream) emitParts(e *entity) {
	e.dirty = false
	if i := slices.Index(s.unwritten, e); i >= 0 {
		s.unwritten = slices.Delete(s.unwritten, i, i+1)
	}
	type todo struct {
		p     part
		canon [sha256.Size]byte
		prev  string
	}
	var todos []todo
	var cats []string
	for _, p := range e.b.parts(s) {
		line, err := asr.Marshal(p.rec)
		if err != nil {
			s.c.diag(sdk.SeverityError, s.id, summaryInternal, err.Error())
			continue
		}
		canon := sha256.Sum256(line)
		w, had := e.written[p.key]
		if had && w.canon == canon {
			continue
		}
		todos = append(todos, todo{p, canon, w.id})
		cats = append(cats, p.lossy...)
	}
	s.declare(cats, e.at, e.replayed, e.frames)
	for _, t := range todos {
		id := s.write(t.p.rec, e.at, e.replayed, e.frames, t.prev)
		if id == "" {
			continue
		}
		e.written[t.p.key] = writtenPart{id: id, canon: t.canon}
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
