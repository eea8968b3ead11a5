package acpasr

import (
	"encoding/json"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// plan is the latest plan_update snapshot for a planId; each update
// replaces the whole plan, and its _meta is the plan_update's as sent
// (decision 6), not folded.
type plan struct {
	id, typ string
	entries json.RawMessage
	meta    meta
}

func (p *plan) finished() bool { return true }

func (p *plan) parts(*stream) []part {
	return []part{{key: asr.TypePlan, rec: &asr.Plan{
		Envelope:   asr.Envelope{Type: asr.TypePlan},
		PlanID:     p.id,
		PlanType:   p.typ,
		Entries:    p.entries,
		Provenance: asr.Provenance{Meta: p.meta.out()},
	}}}
}

// planUpdate maps a plan with entries (the stable "items" type, or any type
// that carries entries). The unstable "file" and "markdown" plans have no
// entries: they stay audit records (ASR-710).
func (s *stream) planUpdate(f *sdk.Frame, u obj) bool {
	content, st := u.object("plan")
	if st != valid {
		s.c.diag(sdk.SeverityWarning, s.id, "plan_update: plan is not an object", "kept as an audit record")
		return false
	}
	id, st := content.str("planId")
	if st != valid {
		s.c.diag(sdk.SeverityWarning, s.id, "plan_update: planId missing or not a string", "kept as an audit record")
		return false
	}
	entries, st := content.array("entries")
	if st != valid {
		if typ, _ := content.str("type"); typ == "items" {
			s.c.diag(sdk.SeverityWarning, s.id, "plan_update: entries is not an array", "kept as an audit record")
		}
		return false
	}
	e := s.entity(asr.TypePlan, id, true, f, func() body { return &plan{id: id} })
	p := e.b.(*plan)
	p.typ, _ = content.str("type")
	p.entries = s.objectArray("plan_update: entries", content.raw("entries"), entries)
	p.meta = metaOf(u)
	return true
}
