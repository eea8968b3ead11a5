package acpasr

import (
	"encoding/json"
	"maps"

	"github.com/acptap/acptap/sdk"
)

// meta is an entity's folded _meta. Marshalling sorts its keys, so map
// order never reaches the output.
type meta map[string]json.RawMessage

// fold applies an upsert's top-level _meta by ACP's rule (ASR-708): absent
// leaves it, null clears it, an object patches it key by key (a null value
// removes the key, any other value replaces it without merging). Every key,
// the trace-context ones (traceparent, tracestate, baggage) included, is
// kept as sent. Chunk, notice and content-item _meta are not folded.
func (m *meta) fold(s *stream, o obj) {
	v, st := o.member("_meta")
	switch st {
	case missing:
		return
	case isNull:
		*m = nil
		return
	}
	patch, ok := parseObj(v)
	if !ok {
		s.c.diag(sdk.SeverityWarning, s.id, "_meta is not an object", "ignored")
		return
	}
	if *m == nil {
		*m = meta{}
	}
	for _, e := range patch {
		if isJSONNull(e.v) {
			delete(*m, e.k)
		} else {
			(*m)[e.k] = compact(e.v)
		}
	}
}

// out is the record's _meta (nil when empty).
func (m meta) out() map[string]json.RawMessage {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}

// metaOf reads a _meta object that is not folded (plan_update's, as sent).
func metaOf(o obj) meta {
	m, st := o.object("_meta")
	if st != valid || len(m) == 0 {
		return nil
	}
	out := meta{}
	for _, e := range m {
		out[e.k] = compact(e.v)
	}
	return out
}
