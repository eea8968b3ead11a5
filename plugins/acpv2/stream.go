package acpv2

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// Loss categories (ASR-722). The first four always apply to ACP v2.
const (
	lossToolResultContent = "tool_result.content"
	lossToolTransitions   = "_org.agent-session.acp/tool_status_transitions"
	lossReasoning         = "reasoning"
	// lossCaptureGap is acptap's own: frames of the connection were not
	// observed (a gap in the wire log), so records may be missing or partial.
	lossCaptureGap = "_org.acptap/capture_gap"
)

var alwaysLossy = []string{"inference", "message.author", "timestamps", "usage"}

// stream is the ASR stream of one ACP session (ASR-701).
type stream struct {
	c     *conn
	id    string
	n     int // connection number for derived ids (ASR-716)
	roots []asr.Root
	lossy map[string]bool
	next  uint64 // seq of the next record
	ents  map[entKey]*entity
	// unwritten holds context entities without a record yet, by first
	// sight; dirty holds entities changed since their last record.
	unwritten []*entity
	dirty     []*entity
	lastCtx   *entity // the context entity seen last (ASR-719 throughId)
	replaying bool    // inside a session/resume history replay (ASR-707)
	title     json.RawMessage
	infoMeta  meta
	notices   int
}

// open returns the stream for id, creating it (and writing its header
// unless the store already has one) when new.
func (c *conn) open(id string, roots []string, at time.Time, seqs []uint64, lineage *asr.Lineage, extraLossy ...string) *stream {
	if s, ok := c.streams[id]; ok {
		return s
	}
	s := &stream{c: c, id: id, lossy: map[string]bool{}, next: 1, ents: map[entKey]*entity{}}
	c.streams[id] = s
	c.list = append(c.list, s)
	if p, ok := c.prior[id]; ok {
		s.n = p.Connections
		if len(p.Records) > 0 {
			s.continueFrom(p.Records)
			return s
		}
	}
	s.roots = asr.RootIDs(roots)
	for _, l := range alwaysLossy {
		s.lossy[l] = true
	}
	for _, l := range extraLossy {
		s.lossy[l] = true
	}
	h := asr.Header{
		Type:      "header",
		ASR:       asr.FormatVersion,
		SessionID: id,
		Producer: asr.Producer{
			Method:  "recorder",
			Name:    "acptap",
			Version: Version,
			Plugin:  &asr.Plugin{Name: Name, Version: Version},
			Source:  &asr.Source{Format: "acp", FormatVersion: SourceFormatVersion},
			Lossy:   asr.SortedKeys(s.lossy),
		},
		Lineage: lineage,
	}
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
	line, err := asr.Marshal(h)
	if err != nil {
		c.diag(sdk.SeverityError, id, summaryInternal, err.Error())
		return s
	}
	c.emit(sdk.ASRHeader, id, line, uniqueSorted(seqs))
	return s
}

// continueFrom picks up a stream the store already has: its roots, its
// declared losses, and the seq after its last record.
func (s *stream) continueFrom(records [][]byte) {
	h, err := asr.ReadHeader(records[0])
	if err != nil {
		s.c.diag(sdk.SeverityWarning, s.id, "prior stream has no readable header", err.Error())
	} else {
		if h.Workspace != nil {
			s.roots = h.Workspace.Roots
		}
		for _, l := range h.Producer.Lossy {
			s.lossy[l] = true
		}
	}
	for _, line := range records[1:] {
		g, err := asr.ReadRecord(line)
		if err != nil {
			continue
		}
		s.next = max(s.next, g.Seq+1)
		if g.Type == asr.TypeDeclaration {
			var d asr.Declaration
			if json.Unmarshal(line, &d) == nil {
				for _, l := range d.Lossy {
					s.lossy[l] = true
				}
			}
		}
	}
}

// streamFor returns the stream an agent message names. A session never
// opened on this connection is still recorded (its traffic is observed),
// with a diagnostic.
func (c *conn) streamFor(id string, f *sdk.Frame) *stream {
	if s, ok := c.streams[id]; ok {
		return s
	}
	if _, ok := c.prior[id]; !ok {
		c.diag(sdk.SeverityWarning, id, "session not opened on this connection",
			"no session/new, session/resume or session/fork was seen for it; its header has no workspace roots")
	}
	if c.gap {
		// Seen only after a gap: its opening may be what was lost.
		return c.open(id, nil, f.At, []uint64{f.Seq}, nil, lossCaptureGap)
	}
	return c.open(id, nil, f.At, []uint64{f.Seq}, nil)
}

// write appends one record: it fills the envelope (seq, id, time, native
// reference) and emits the line.
func (s *stream) write(rec asr.Record, at time.Time, replayed bool, seqs []uint64, supersedes string) string {
	env := rec.Env()
	env.Seq, env.ID, env.Supersedes = s.next, asr.RecordID(s.next), supersedes
	env.TS, env.TSSource, env.ObservedAt = "", "", ""
	switch {
	case at.IsZero():
	case replayed:
		env.ObservedAt = asr.FormatTime(at) // ASR-707: no ts for replayed history
	default:
		env.TS, env.TSSource = asr.FormatTime(at), asr.TSSourceRecorder
	}
	prov := rec.Prov()
	if prov.Native == nil {
		prov.Native = &asr.Native{}
	}
	prov.Native.Ref = &asr.NativeRef{Wire: s.c.wire, Frames: seqs}
	line, err := asr.Marshal(rec)
	if err != nil {
		s.c.diag(sdk.SeverityError, s.id, summaryInternal, fmt.Sprintf("marshal %s: %v", env.Type, err))
		return ""
	}
	s.next++
	s.c.emit(sdk.ASRRecord, s.id, line, seqs)
	return env.ID
}

// record writes a record that is not an entity (state, usage, audit, …).
func (s *stream) record(rec asr.Record, f *sdk.Frame, seqs ...uint64) {
	if len(seqs) == 0 {
		seqs = []uint64{f.Seq}
	}
	s.write(rec, f.At, s.replaying, uniqueSorted(seqs), "")
}

// declare adds loss categories learned after the header (a declaration
// record); categories already declared are skipped.
func (s *stream) declare(cats []string, at time.Time, replayed bool, seqs []uint64) {
	add := map[string]bool{}
	for _, l := range cats {
		if !s.lossy[l] {
			add[l] = true
			s.lossy[l] = true
		}
	}
	if len(add) == 0 {
		return
	}
	s.write(&asr.Declaration{Envelope: asr.Envelope{Type: asr.TypeDeclaration}, Lossy: asr.SortedKeys(add)}, at, replayed, seqs, "")
}

// uniqueSorted sorts seqs and drops duplicates (batch elements share a seq).
func uniqueSorted(seqs []uint64) []uint64 {
	out := make([]uint64, 0, len(seqs))
	for _, q := range seqs {
		out = insertSeq(out, q)
	}
	return out
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
