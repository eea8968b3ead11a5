// What a stream keeps of its history: compact fingerprints of the entities
// it no longer holds (released, or recorded on an earlier connection), the
// latest snapshot of each latest-wins kind, and the fingerprints of its
// audit-only records and notices. With them, a replay writes no second
// record for what was recorded (ASR-717), and a later change is still a
// superseding record (ASR-706), while memory grows with the open entities,
// not with the session.

package acpasr

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// doneEnt is what is kept of an entity released from memory, or recorded
// on an earlier connection, packed into a few dozen bytes: its first
// record, the latest record and content fingerprint of each of its parts,
// its first receipt time, and the attributes no update carries. The done
// maps key it by a 64-bit hash of the entity's identity (doneKey).
type doneEnt string

// doneView is a doneEnt unpacked.
type doneView struct {
	first uint64 // seq of its first record
	at    int64  // receipt time of its first update, Unix ms (0: none)
	aux   uint64 // carrier attributes (a compaction's extent)
	flags uint8
	parts []donePart
}

type donePart struct {
	code uint64 // partCode
	seq  uint64
	fp   asr.Fingerprint
}

// doneKey hashes an entity's identity (FNV-1a, 64 bits). Two entities of a
// stream share a hash with a chance of about n²/2⁶⁵ (10⁻⁸ for a million).
func doneKey(k entKey) uint64 {
	h := uint64(14695981039346656037)
	for _, str := range [2]string{k.kind, k.id} {
		for i := 0; i < len(str); i++ {
			h ^= uint64(str[i])
			h *= 1099511628211
		}
		h ^= 0xff
		h *= 1099511628211
	}
	return h
}

// partCode numbers a part key of an entity of the given kind: 0 its main
// record (the kind itself), 1 a tool result, 2+n the nth file change.
func partCode(kind, key string) (uint64, bool) {
	switch {
	case key == kind:
		return 0, true
	case key == asr.TypeToolResult:
		return 1, true
	case strings.HasPrefix(key, "file_change#"):
		n, err := strconv.ParseUint(key[len("file_change#"):], 10, 32)
		return 2 + n, err == nil
	}
	return 0, false
}

func partKey(kind string, code uint64) string {
	switch code {
	case 0:
		return kind
	case 1:
		return asr.TypeToolResult
	}
	return "file_change#" + strconv.FormatUint(code-2, 10)
}

func (v doneView) pack() doneEnt {
	b := make([]byte, 0, 16+len(v.parts)*16)
	b = binary.AppendUvarint(b, v.first)
	b = binary.AppendVarint(b, v.at)
	b = binary.AppendUvarint(b, v.aux)
	b = append(b, v.flags)
	for _, p := range v.parts {
		b = binary.AppendUvarint(b, p.code)
		b = binary.AppendUvarint(b, p.seq)
		b = binary.BigEndian.AppendUint64(b, uint64(p.fp))
	}
	return doneEnt(b)
}

func (d doneEnt) view() doneView {
	b := []byte(d)
	var v doneView
	var n int
	next := func() uint64 {
		x, k := binary.Uvarint(b[n:])
		n += max(k, 0)
		return x
	}
	v.first = next()
	at, k := binary.Varint(b[n:])
	n += max(k, 0)
	v.at = at
	v.aux = next()
	if n < len(b) {
		v.flags = b[n]
		n++
	}
	for n < len(b) {
		p := donePart{code: next(), seq: next()}
		if n+8 > len(b) {
			break
		}
		p.fp = asr.Fingerprint(binary.BigEndian.Uint64(b[n:]))
		n += 8
		v.parts = append(v.parts, p)
	}
	return v
}

func (v doneView) part(code uint64) (donePart, bool) {
	for _, p := range v.parts {
		if p.code == code {
			return p, true
		}
	}
	return donePart{}, false
}

// set records a part's latest record.
func (v *doneView) set(p donePart) {
	for i := range v.parts {
		if v.parts[i].code == p.code {
			v.parts[i] = p
			return
		}
	}
	v.parts = append(v.parts, p)
}

// compactEntity keeps what a released entity still needs.
func compactEntity(e *entity) doneEnt {
	v := doneView{first: seqOf(e.firstID)}
	if !e.replayed && !e.at.IsZero() {
		v.at = e.at.UnixMilli()
	}
	if c, ok := e.b.(carrier); ok {
		v.flags, v.aux = c.carry()
	}
	for k, w := range e.written {
		if code, ok := partCode(e.key.kind, k); ok {
			v.set(donePart{code: code, seq: seqOf(w.id), fp: w.fp})
		}
	}
	slices.SortFunc(v.parts, func(a, b donePart) int { return cmp.Compare(a.code, b.code) })
	return v.pack()
}

// recordedIn is the id of the latest record of an entity's part in a done
// map.
func recordedIn(done map[uint64]doneEnt, k entKey, key string) (string, bool) {
	d, ok := done[doneKey(k)]
	if !ok {
		return "", false
	}
	code, ok := partCode(k.kind, key)
	if !ok {
		return "", false
	}
	p, ok := d.view().part(code)
	return asr.RecordID(p.seq), ok
}

// seqOf is the seq in a record id "r<seq>".
func seqOf(id string) uint64 {
	n, _ := strconv.ParseUint(strings.TrimPrefix(id, "r"), 10, 64)
	return n
}

// priorState is what the store knows of a session when this connection
// first names it (sdk.SessionInfo, sdk.PriorSession), reduced to what the
// mapping needs: the stream's lines themselves are not kept.
type priorState struct {
	n        int         // connections that observed the session before (ASR-716)
	header   *asr.Header // nil: the store has no stream for it
	done     map[uint64]doneEnt
	latest   map[string][]byte // latest-wins record type → its latest line
	contents map[asr.Fingerprint]struct{}
	title    json.RawMessage
	infoMeta meta
}

// priorRecord is the part of a stored record the index needs.
type priorRecord struct {
	Type         string                     `json:"type"`
	Seq          uint64                     `json:"seq"`
	ID           string                     `json:"id"`
	TS           string                     `json:"ts"`
	Supersedes   string                     `json:"supersedes"`
	MessageID    string                     `json:"messageId"`
	CallID       string                     `json:"callId"`
	PlanID       string                     `json:"planId"`
	TerminalID   string                     `json:"terminalId"`
	CompactionID string                     `json:"compactionId"`
	RequestID    string                     `json:"requestId"`
	ChildSession string                     `json:"childSession"`
	Origin       string                     `json:"origin"`
	State        string                     `json:"state"`
	Author       string                     `json:"author"`
	IDSource     string                     `json:"idSource"`
	Cause        *asr.Cause                 `json:"cause"`
	Replaces     *asr.Replaces              `json:"replaces"`
	Title        json.RawMessage            `json:"title"`
	Meta         map[string]json.RawMessage `json:"_meta"`
}

// buildPrior indexes a stored stream (header first) for session id: what
// it recorded, for ASR-717 and the links between sessions. Its header, seqs
// and declared losses are the stream writer's (taken up before).
func (c *conn) buildPrior(id string, n int, lines [][]byte) *priorState {
	p := &priorState{n: n, done: map[uint64]doneEnt{},
		latest: map[string][]byte{}, contents: map[asr.Fingerprint]struct{}{}}
	h, ok := c.w.Prior(id)
	if !ok {
		return p
	}
	p.header = h
	fcParts := map[string]string{} // file_change record id → its part key
	fcCount := map[string]int{}    // callId → file_change parts so far
	ents := map[entKey]*doneView{}
	for _, line := range lines[1:] {
		var r priorRecord
		if json.Unmarshal(line, &r) != nil || r.Type == "" {
			continue
		}
		k, partKey := entKey{}, r.Type
		switch r.Type {
		case asr.TypeDeclaration:
			continue
		case asr.TypeState, asr.TypeUsageSummary, asr.TypeConfigChange, asr.TypeSessionInfo:
			if r.Type == asr.TypeState && r.State == "resumed" {
				continue
			}
			p.latest[r.Type] = append([]byte(nil), line...)
			if r.Type == asr.TypeSessionInfo {
				p.title, p.infoMeta = r.Title, r.Meta
			}
			continue
		case asr.TypeMessage:
			if r.Origin == "notice" {
				if fp, err := asr.RecordFingerprint(line, "messageId"); err == nil {
					p.contents[fp] = struct{}{}
				}
				continue
			}
			k = entKey{asr.TypeMessage, r.MessageID}
		case asr.TypeToolCall, asr.TypeToolResult:
			k = entKey{asr.TypeToolCall, r.CallID}
		case asr.TypeFileChange:
			if r.Cause == nil {
				continue
			}
			k = entKey{asr.TypeToolCall, r.Cause.CallID}
			if prev, ok := fcParts[r.Supersedes]; ok {
				partKey = prev
			} else {
				partKey = "file_change#" + strconv.Itoa(fcCount[r.Cause.CallID])
				fcCount[r.Cause.CallID]++
			}
			fcParts[r.ID] = partKey
		case asr.TypePlan:
			k = entKey{asr.TypePlan, r.PlanID}
		case asr.TypeTerminal:
			k = entKey{asr.TypeTerminal, r.TerminalID}
		case asr.TypeCompaction:
			k = entKey{asr.TypeCompaction, r.CompactionID}
		case asr.TypePermission, asr.TypeInputRequest:
			k = entKey{r.Type, r.RequestID}
		case asr.TypeSubagent:
			k = entKey{asr.TypeSubagent, r.ChildSession}
		default:
			if strings.HasPrefix(r.Type, asr.AuditPrefix) {
				if fp, err := asr.RecordFingerprint(line); err == nil {
					p.contents[fp] = struct{}{}
				}
			}
			continue
		}
		fp, err := asr.RecordFingerprint(line)
		if err != nil {
			continue
		}
		code, ok := partCode(k.kind, partKey)
		if !ok {
			continue
		}
		d, ok := ents[k]
		if !ok {
			d = &doneView{first: r.Seq}
			if t, err := time.Parse(time.RFC3339Nano, r.TS); err == nil {
				d.at = t.UnixMilli()
			}
			ents[k] = d
		}
		if r.Type == asr.TypeCompaction {
			d.aux = 0
			if r.Replaces != nil {
				d.aux = seqOf(r.Replaces.ThroughID)
			}
		}
		if r.Type == asr.TypeMessage && r.Origin == "prompt" {
			d.flags |= flagPrompt
			if r.Author == "human" {
				d.flags |= flagHuman
			}
		}
		if r.Type == asr.TypeMessage && r.IDSource == "derived" {
			d.flags |= flagDerived
		}
		d.set(donePart{code: code, seq: r.Seq, fp: fp})
	}
	for k, d := range ents {
		slices.SortFunc(d.parts, func(a, b donePart) int { return cmp.Compare(a.code, b.code) })
		p.done[doneKey(k)] = d.pack()
	}
	return p
}

// continueFrom picks up a stream the store already has: its roots, its
// declared losses, its lineage, the seq after its last record, and the
// index of what it recorded.
func (s *stream) continueFrom(p *priorState) {
	h := p.header
	if h.Workspace != nil {
		s.roots = h.Workspace.Roots
	}
	if l := h.Lineage; l != nil {
		if l.Inherits != nil && l.Inherits.Mode == "copied" {
			s.copyFrom = l.Inherits.From
		}
		s.spawned = l.SpawnedBy != nil
	}
	s.done, s.latest, s.contents = p.done, p.latest, p.contents
	s.title, s.infoMeta = p.title, p.infoMeta
}

// recordedPart is the id of the latest record of an entity's part in
// another session's stream: open on this connection, or known from the
// store.
func (c *conn) recordedPart(session string, k entKey, key string) (string, bool) {
	if s, ok := c.streams[session]; ok {
		if e, ok := s.ents[k]; ok {
			w, ok := e.written[key]
			return w.id, ok
		}
		return recordedIn(s.done, k, key)
	}
	if p, ok := c.prior[session]; ok {
		return recordedIn(p.done, k, key)
	}
	return "", false
}

// recordedFlags are the update-less attributes of an entity in another
// session's stream (a fork copies its parent's prompts as prompts).
func (c *conn) recordedFlags(session string, k entKey) uint8 {
	if s, ok := c.streams[session]; ok {
		if e, ok := s.ents[k]; ok {
			if c, ok := e.b.(carrier); ok {
				f, _ := c.carry()
				return f
			}
			return 0
		}
		return s.done[doneKey(k)].view().flags
	}
	if p, ok := c.prior[session]; ok {
		return p.done[doneKey(k)].view().flags
	}
	return 0
}

// knows says whether the records of a session are known on this connection.
func (c *conn) knows(session string) bool {
	if _, ok := c.streams[session]; ok {
		return true
	}
	p, ok := c.prior[session]
	return ok && p.header != nil
}

// markCopy sets copiedFrom on a record of replayed history in a fork
// (ASR-718): the parent's record of the same entity part, by native id.
func (s *stream) markCopy(rec asr.Record, k entKey, key string) {
	if id, ok := s.c.recordedPart(s.copyFrom, k, key); ok {
		rec.Env().CopiedFrom = &asr.CopiedFrom{Session: s.copyFrom, Record: id, Proof: asr.ProofNativeID}
		return
	}
	if !s.c.knows(s.copyFrom) && !s.copyWarned {
		s.copyWarned = true
		s.c.diag(sdk.SeverityWarning, s.id, "the fork's parent is not known on this connection",
			"records of replayed history carry no copiedFrom: the parent "+strconv.Quote(s.copyFrom)+" was not named on this connection and the store sent nothing of it")
	}
}

// deferred is a latest-wins record seen inside a replay.
type deferred struct {
	rec  asr.Record
	w    sdk.When
	seqs []uint64
	ord  uint64
}

// latestWins are the record types whose latest value is what matters
// (state, usage, session info, configuration): inside a replay only the
// value current at its end is recorded, when it differs from the stream's.
func latestWins(typ string) bool {
	switch typ {
	case asr.TypeState, asr.TypeUsageSummary, asr.TypeSessionInfo, asr.TypeConfigChange:
		return true
	}
	return false
}

// beginReplay starts a history replay (session/resume with replayFrom):
// entities are folded afresh from the replayed updates (ASR-717).
func (s *stream) beginReplay() {
	s.replaying = true
	s.epoch++
	s.replayLast = ""
	s.deferred = map[string]deferred{}
	s.copyWarned = false
}

// endReplay ends a history replay: the replayed entities are written (or
// not, when equal to what was recorded), then the latest-wins values
// current at the end, then, in a fork, the declaration of the last copied
// record (ASR-718). ACP v2 says the agent replays history, then sends the
// current state_update, then answers session/resume: the response ends the
// replay.
func (s *stream) endReplay(at time.Time, seqs []uint64) {
	if !s.replaying {
		return
	}
	s.flush()
	s.endTurn()
	list := make([]deferred, 0, len(s.deferred))
	for _, d := range s.deferred {
		list = append(list, d)
	}
	slices.SortFunc(list, func(a, b deferred) int { return cmp.Compare(a.ord, b.ord) })
	for _, d := range list {
		s.snapshot(d.rec, d.w, d.seqs, true)
	}
	s.deferred = nil
	for _, fp := range s.replayContents {
		s.contents[fp] = struct{}{}
	}
	s.replayContents = nil
	last := s.replayLast
	s.replaying = false
	if s.copyFrom != "" && last != "" {
		s.write(&asr.Declaration{Envelope: asr.Envelope{Type: asr.TypeDeclaration}, LocalThroughID: last}, sdk.When{At: at}, seqs, "")
	}
}

// snapshot writes a latest-wins record; ifChanged skips a value equal to
// the stream's latest of that type.
func (s *stream) snapshot(rec asr.Record, w sdk.When, seqs []uint64, ifChanged bool) {
	typ := rec.Env().Type
	if prev, ok := s.latest[typ]; ok && ifChanged {
		if line, err := asr.Marshal(rec); err == nil {
			a, err1 := asr.RecordFingerprint(line)
			b, err2 := asr.RecordFingerprint(prev)
			if err1 == nil && err2 == nil && a == b {
				return
			}
		}
	}
	if _, line := s.write(rec, w, seqs, ""); line != nil && !isResumed(rec) {
		s.latest[typ] = line
	}
}

// isResumed says whether rec is the state "resumed": a mark of the
// recorder's, not the agent's state, so not the latest state to compare a
// replay's with.
func isResumed(rec asr.Record) bool {
	st, ok := rec.(*asr.State)
	return ok && st.State == "resumed"
}

// content writes an audit-only record or a notice. Inside a replay, one
// whose content the stream already has is not written again (ASR-717).
func (s *stream) content(rec asr.Record, w sdk.When, seqs []uint64) {
	var omit []string
	if m, ok := rec.(*asr.Message); ok && m.IDSource == "derived" {
		omit = []string{"messageId"} // a notice's id is derived from its frame
	}
	pre, err := asr.Prepare(rec, omit...)
	if err != nil {
		s.c.diag(sdk.SeverityError, s.id, sdk.SummaryInternal, err.Error())
		return
	}
	fp := pre.Fingerprint()
	if s.replaying {
		// Compared with what was recorded before the replay only: the
		// same content twice in the history is written twice.
		if _, seen := s.contents[fp]; seen {
			pre.Release()
			return
		}
		s.replayContents = append(s.replayContents, fp)
	} else {
		s.contents[fp] = struct{}{}
	}
	s.writePrepared(rec, &pre, w, seqs, "")
}

// sourceTime reads a source time from an update's _meta ("timestamp", an
// RFC 3339 time): replayed history that carries one gets it as ts (ASR-707).
func sourceTime(u obj) string {
	m, st := u.object("_meta")
	if st != valid {
		return ""
	}
	v, st := m.str("timestamp")
	if st != valid {
		return ""
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return ""
	}
	return asr.FormatTime(t)
}
