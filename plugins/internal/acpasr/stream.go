package acpasr

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// stream is the ASR stream of one ACP session (ASR-701).
type stream struct {
	c  *conn
	id string
	w  *sdk.Stream // seqs, envelopes, declared losses, continuation
	n  int         // connection number for derived ids (ASR-716)
	// textHint is the escaped length of the last message text written: a
	// new message's text block makes room for about as much (blocks.hint).
	textHint int
	roots    []asr.Root
	ents     map[entKey]*entity
	// lastEnt is the entity entity found or made last, while it is in
	// ents (deleted, it is dropped here too): most updates name the
	// entity of the update before (a message's chunks), no map look-up.
	lastEnt *entity
	// done holds the entities no longer held in full: released after a
	// whole turn final, or recorded on an earlier connection.
	done map[uint64]doneEnt
	// unwritten holds context entities without a record yet, by first
	// sight; dirty holds entities changed since their last record.
	unwritten []*entity
	dirty     []*entity
	lastCtx   *entity // the context entity seen last (ASR-719 throughId)
	gen       int     // turn generation: +1 at every turn end
	// History replay (session/resume with replayFrom; ASR-707, 717, 718).
	replaying  bool
	epoch      int                 // +1 at every replay
	src        string              // the current update's source time, in a replay
	deferred   map[string]deferred // latest-wins records seen in the replay
	replayLast string              // the last record written from the replay
	copyFrom   string              // a fork's parent: replayed history is copied from it
	copyWarned bool
	// latest holds the last line of each latest-wins type; contents the
	// fingerprints of the audit-only records and notices written.
	latest   map[string][]byte
	contents map[asr.Fingerprint]struct{}
	// replayContents are the contents written by the replay in progress.
	replayContents []asr.Fingerprint
	// outbound holds the session_message ids this session sent (ASR-735).
	outbound map[string]bool
	// held are session_message_chunks waiting for an upsert of their
	// message (Options.HoldChunks), by messageId; heldN counts them.
	held     map[string][]heldChunk
	heldN    int
	spawned  bool // the header carries lineage.spawnedBy (ASR-721)
	partial  bool // the parts being rendered are a partial snapshot (emitPartial)
	prompts  int  // session/prompt requests not answered yet
	title    json.RawMessage
	infoMeta meta
}

// open returns the stream for id, creating it (and writing its header
// unless the store already has one) when new.
func (c *conn) open(id string, roots []string, at time.Time, seqs []uint64, lineage *asr.Lineage, extraLossy ...string) *stream {
	if s, ok := c.streams[id]; ok {
		return s
	}
	s := &stream{c: c, id: id, ents: map[entKey]*entity{}, done: map[uint64]doneEnt{},
		latest: map[string][]byte{}, contents: map[asr.Fingerprint]struct{}{}, outbound: map[string]bool{}}
	c.streams[id] = s
	c.list = append(c.list, s)
	if p, ok := c.prior[id]; ok {
		delete(c.prior, id)
		s.n = p.n
		if p.header != nil {
			s.continueFrom(p)
			s.w = c.w.OpenHeader(id, nil, nil)
			return s
		}
	}
	if r, ok := c.childRoots[id]; ok {
		delete(c.childRoots, id)
		if roots == nil {
			roots = r
		}
	}
	if lineage == nil {
		if parent, ok := c.spawned[id]; ok {
			lineage = &asr.Lineage{SpawnedBy: &asr.SessionLink{Session: parent, Evidence: asr.EvidenceNativeField}}
		}
	}
	if lineage != nil {
		if lineage.Inherits != nil && lineage.Inherits.Mode == "copied" {
			s.copyFrom = lineage.Inherits.From
		}
		s.spawned = lineage.SpawnedBy != nil
	}
	s.roots = asr.RootIDs(roots)
	h := asr.Header{Producer: c.producer(), Lineage: lineage}
	h.Producer.Lossy = append(h.Producer.Lossy, extraLossy...)
	if !at.IsZero() {
		h.CreatedAt = asr.FormatTime(at)
	}
	if len(s.roots) > 0 {
		h.Workspace = &asr.Workspace{Roots: s.roots}
	}
	switch {
	case c.agent != nil:
		h.Agent = &asr.Agent{Name: c.cfg.agentName(c.agent.name), Version: c.agent.version}
		seqs = append([]uint64{c.agent.seq}, seqs...)
	case c.cfg.AgentName != "":
		h.Agent = &asr.Agent{Name: c.cfg.AgentName}
	}
	s.w = c.w.OpenHeader(id, &h, seqs)
	return s
}

// producer is the producer of every header (ASR-700, ASR-722).
func (c *conn) producer() asr.Producer {
	return asr.Producer{Method: c.opts.Method, Name: c.opts.Name, Version: c.opts.Version,
		Plugin: &c.opts.Plugin, Source: &c.opts.Source, Lossy: slices.Clone(c.opts.AlwaysLossy)}
}

// streamFor returns the stream an agent message names. A session never
// opened on this connection is still recorded (its traffic is observed),
// with a diagnostic unless it is a known subagent's (ASR-721).
func (c *conn) streamFor(id string, f *sdk.Frame) *stream {
	if s := c.lastStream; s != nil && s.id == id {
		return s // a stream, once opened, stays its id's
	}
	if s, ok := c.streams[id]; ok {
		c.lastStream = s
		return s
	}
	_, known := c.prior[id]
	_, child := c.spawned[id]
	if !known && !child {
		c.diag(sdk.SeverityWarning, id, "session not opened on this connection",
			"no session/new, session/resume or session/fork was seen for it; its header has no workspace roots")
	}
	if c.gap {
		// Seen only after a gap: its opening may be what was lost.
		return c.open(id, nil, f.At, []uint64{f.Seq}, nil, asr.LossCaptureGap)
	}
	return c.open(id, nil, f.At, []uint64{f.Seq}, nil)
}

// write appends one record through the SDK's stream writer (seq, id, times,
// native reference) and returns its id and line; a record written from a
// replay is the replay's last so far.
func (s *stream) write(rec asr.Record, w sdk.When, seqs []uint64, supersedes string) (string, []byte) {
	return s.writePrepared(rec, nil, w, seqs, supersedes)
}

// writePrepared is write, the line from pre (asr.Prepare of rec) when
// there is one.
func (s *stream) writePrepared(rec asr.Record, pre *asr.Prepared, w sdk.When, seqs []uint64, supersedes string) (string, []byte) {
	rec.Env().Supersedes = supersedes
	var id string
	var line []byte
	if pre != nil {
		id, line = s.w.WritePrepared(pre, w, seqs...)
	} else {
		id, line = s.w.Write(rec, w, seqs...)
	}
	if line != nil && s.replaying && rec.Env().Type != asr.TypeDeclaration {
		s.replayLast = id
	}
	return id, line
}

// record writes a record that is not an entity (state, usage, audit, …).
// Inside a replay, latest-wins records wait for its end and content
// already recorded is skipped (ASR-717).
func (s *stream) record(rec asr.Record, f *sdk.Frame, seqs ...uint64) {
	if len(seqs) == 0 {
		seqs = []uint64{f.Seq}
	}
	w := sdk.When{At: f.At, Replayed: s.replaying, Source: s.src}
	typ := rec.Env().Type
	switch {
	case latestWins(typ) && s.replaying:
		s.deferred[typ] = deferred{rec: rec, w: w, seqs: seqs, ord: s.c.ord}
	case latestWins(typ):
		s.snapshot(rec, w, seqs, false)
	case strings.HasPrefix(typ, asr.AuditPrefix), typ == asr.TypeMessage:
		s.content(rec, w, seqs)
	default:
		s.write(rec, w, seqs, "")
	}
}

// declare adds loss categories learned after the header (a declaration
// record); categories already declared are skipped.
func (s *stream) declare(cats []string, w sdk.When, seqs []uint64) {
	s.w.Declare(cats, w, seqs...)
}

// insertSeq adds q to the sorted set seqs.
func insertSeq(seqs []uint64, q uint64) []uint64 {
	i := len(seqs)
	for i > 0 && seqs[i-1] > q {
		i--
	}
	if i > 0 && seqs[i-1] == q {
		return seqs
	}
	seqs = append(seqs, 0)
	copy(seqs[i+1:], seqs[i:])
	seqs[i] = q
	return seqs
}
