package acpasr

import (
	"encoding/json"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// compaction folds compaction_update upserts and compaction_summary_chunk
// appends by compactionId (ASR-719).
type compaction struct {
	id, status string
	summary    blocks
	hasSummary bool
	chunked    bool
	err        json.RawMessage
	meta       meta
	// through is the context entity seen last before the compaction: by
	// this mapping's convention the compaction replaces everything through
	// it (ACP does not state the extent).
	through *entity
	placed  bool   // through was set at the compaction's first sight
	fixed   string // the extent as recorded, kept across a replay
}

func (c *compaction) carry() (uint8, uint64) {
	if c.fixed != "" {
		return 0, seqOf(c.fixed)
	}
	if c.through != nil && c.through.firstID != "" {
		return 0, seqOf(c.through.firstID)
	}
	return 0, 0
}

func (c *compaction) restore(_ uint8, aux uint64) {
	c.placed = true
	if aux != 0 {
		c.fixed = asr.RecordID(aux)
	}
}

func (c *compaction) finished() bool { return finalStatus(c.status) }

// compactionStatus is the record's status for ACP's (ASR-719): ACP's four
// values and "_" vendor values unchanged; any other value, reserved for
// future ACP variants, is "unknown" (as decision 2 does for tool calls).
func compactionStatus(st string) string {
	switch {
	case st == "in_progress", finalStatus(st), vendorValue(st):
		return st
	}
	return "unknown"
}

func (c *compaction) parts(s *stream) []part {
	status := compactionStatus(c.status)
	if s.partial && !finalStatus(c.status) {
		status = "partial" // a snapshot before it is final (ASR-705)
	}
	rec := &asr.Compaction{
		Envelope:     asr.Envelope{Type: asr.TypeCompaction, Status: status},
		CompactionID: c.id,
		Kind:         "summary",
		Error:        c.err,
		Provenance:   asr.Provenance{Assembly: asr.AssemblyFolded, Meta: c.meta.out()},
	}
	if c.hasSummary {
		rec.Summary = c.summary.list()
	} else {
		rec.Capture = map[string]asr.CaptureState{"summary": {State: "absent"}}
	}
	if c.chunked {
		rec.Assembly = asr.AssemblyChunks
	}
	switch {
	case c.fixed != "":
		rec.Replaces = &asr.Replaces{ThroughID: c.fixed}
	case c.through != nil && c.through.firstID != "":
		rec.Replaces = &asr.Replaces{ThroughID: c.through.firstID}
	}
	return []part{{key: asr.TypeCompaction, rec: rec}}
}

// compactionEntity returns the compaction, noting on first sight (in a
// replay: its first replayed update) the context entity it follows.
func (s *stream) compactionEntity(id string, f *sdk.Frame) (*entity, *compaction) {
	prev := s.lastCtx
	e := s.entity(asr.TypeCompaction, id, true, f, func() body { return &compaction{id: id, status: "in_progress"} })
	c := e.b.(*compaction)
	if !c.placed {
		c.through, c.placed = prev, true
	}
	return e, c
}

// compactionUpdate applies a compaction_update; the compaction is written
// when its status becomes completed, failed or cancelled (ASR-705).
func (s *stream) compactionUpdate(f *sdk.Frame, u obj) bool {
	id, st := u.str("compactionId")
	status, st2 := u.str("status")
	if st != valid || st2 != valid {
		s.c.diag(sdk.SeverityWarning, s.id, "compaction_update: compactionId or status missing or not a string", "kept as an audit record")
		return false
	}
	const what = "compaction_update"
	e, c := s.compactionEntity(id, f)
	prev := c.status
	c.status = status
	switch items, st := u.array("summary"); st {
	case isNull, valid: // null and [] clear
		c.summary.set(s.blocksOnly(what, items))
		c.hasSummary, c.chunked = len(items) > 0, false
	case invalid:
		s.c.diag(sdk.SeverityWarning, s.id, what+": summary is not an array", "summary unchanged")
	}
	switch _, st := u.str("error"); st {
	case isNull:
		c.err = nil
	case valid:
		c.err = compact(u.raw("error"))
	case invalid:
		s.c.diag(sdk.SeverityWarning, s.id, what+": error is not a string", "error unchanged")
	}
	c.meta.fold(s, u)
	if finalStatus(status) && status != prev {
		s.emitFinal(e)
	}
	return true
}

// compactionChunk appends a summary chunk; a first-seen id creates an
// in-progress compaction.
func (s *stream) compactionChunk(f *sdk.Frame, u obj) bool {
	id, st := u.str("compactionId")
	if st != valid || blockProblem(u.raw("content")) != "" {
		s.c.diag(sdk.SeverityWarning, s.id, "compaction_summary_chunk: compactionId or content block missing", "kept as an audit record")
		return false
	}
	_, c := s.compactionEntity(id, f)
	c.summary.chunk(u.raw("content"))
	c.hasSummary, c.chunked = true, true
	return true
}
