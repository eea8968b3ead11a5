package otlp

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/acptap/acptap/host/otlp/spool"
	"github.com/acptap/acptap/sdk/aep"
)

// Projector turns AEP event lines, in order per session, into spool items:
// each event a log record, each finished run its spans. The events are
// down-levelled to MaxCapture first (AEP-0005: default metadata), which is
// also what keeps message content out of spans unless it is opted into.
// Live recording and backfill use the same projector, so they send the
// same records with the same ids. Not safe for concurrent use.
type Projector struct {
	MaxCapture aep.Level
	tracer     Tracer
}

// NewProjector returns a projector; info says what is known of a
// session's agent (nil: nothing), version is acptap's.
func NewProjector(maxCapture aep.Level, version string, info func(session string) Agent) *Projector {
	return &Projector{MaxCapture: maxCapture, tracer: Tracer{Info: info, Version: version}}
}

// Project maps one event line.
func (p *Projector) Project(line []byte) ([]spool.Item, error) {
	ev, err := decodeEvent(line)
	if err != nil {
		return nil, err
	}
	if str(ev, "type") == "" || str(ev, "id") == "" {
		return nil, fmt.Errorf("aep event without type or id")
	}
	aep.Downlevel(ev, p.MaxCapture)
	trace, span, done := p.tracer.Feed(ev)
	lr := LogRecord(ev, trace, span)
	b, err := proto.Marshal(ResourceLogs(str(ev, "agent"), p.tracer.Version, lr))
	if err != nil {
		return nil, fmt.Errorf("encode log record: %w", err)
	}
	items := []spool.Item{{Kind: spool.Logs, Rank: uint8(aep.SeverityRank(Severity(ev))), Session: str(ev, "session"), Data: b}}
	return append(items, spanItems(done)...), nil
}

// Flush returns the spans of runs and tool calls still open, ended at
// their session's last event and marked unfinished.
func (p *Projector) Flush() []spool.Item { return spanItems(p.tracer.Flush()) }

func spanItems(done []Spans) []spool.Item {
	var out []spool.Item
	for _, s := range done {
		b, err := proto.Marshal(s.RS)
		if err != nil {
			continue // a message we built always encodes
		}
		out = append(out, spool.Item{Kind: spool.Spans, Rank: uint8(min(s.Rank, 5)), Session: s.Session, Data: b})
	}
	return out
}
