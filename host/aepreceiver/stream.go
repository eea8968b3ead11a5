package aepreceiver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/acptap/acptap/host/eventstream"
	"github.com/acptap/acptap/sdk/aep"
)

// item is one event on its way to consumers: the stored line, its
// decoded envelope (read only: filters look at it), and what the SSE
// message needs.
type item struct {
	line    []byte
	ev      map[string]any
	typ     string
	id      string // SSE id: {session}:{epoch}:{seq}, "" when not a position
	session string
	pos     position
	hasPos  bool
	rank    int
	capture aep.Level
}

func newItem(h *aep.Header, line []byte) (*item, error) {
	v, err := aep.Decode(line)
	if err != nil {
		return nil, err
	}
	ev, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("not an object")
	}
	it := &item{line: line, ev: ev, typ: h.Type, session: h.Session, rank: aep.SeverityRank(h.Severity), capture: aep.Metadata}
	if l, err := aep.ParseLevel(h.Capture); err == nil {
		it.capture = l
	}
	if h.Session != "" && h.Seq != nil {
		it.pos, it.hasPos = position{h.EpochOrZero(), *h.Seq}, true
		it.id = EventID(h.Session, it.pos.epoch, it.pos.seq)
	}
	return it, nil
}

// publish hands a stored (or redelivered) event to the live consumers;
// the server's lock is held, so a subscription's replay plan and its live
// feed meet exactly.
func (s *Server) publish(h *aep.Header, line []byte) {
	if s.hub.Len() == 0 {
		return
	}
	it, err := newItem(h, append([]byte(nil), line...))
	if err != nil {
		return
	}
	s.hub.Publish(it)
}

// Subscription is what a consumer asked for: a filter, a capture ceiling
// (nil: as stored), and where to start.
type Subscription struct {
	Filter  *aep.Filter
	Ceiling *aep.Level
	All     bool
	From    []Resume
}

// ParseSubscription reads the SSE query (filter, capture, from) and the
// Last-Event-ID header; from wins over Last-Event-ID (AEP-0003 §3.3).
func (s *Server) ParseSubscription(filter, capture, from, lastEventID string) (*Subscription, error) {
	sub := &Subscription{}
	var err error
	if sub.Filter, err = aep.ParseFilter([]byte(filter)); err != nil {
		return nil, err
	}
	if capture != "" {
		l, err := aep.ParseLevel(capture)
		if err != nil {
			return nil, fmt.Errorf("%w: capture: %s", aep.ErrInvalidFilter, err)
		}
		sub.Ceiling = &l
	}
	switch {
	case from == "all":
		sub.All = true
	case from != "":
		if sub.From, err = s.parseFrom([]byte(from)); err != nil {
			return nil, err
		}
	case lastEventID != "":
		r, err := ParseEventID(lastEventID)
		if err != nil {
			return nil, fmt.Errorf("%w: Last-Event-ID: %s", aep.ErrInvalidFilter, err)
		}
		sub.From = []Resume{r}
	}
	return sub, nil
}

// errLimit is a subscription over an endpoint limit (limit-exceeded).
var errLimit = errors.New("limit-exceeded")

func (s *Server) parseFrom(raw []byte) ([]Resume, error) {
	var from []*Resume
	if err := json.Unmarshal(raw, &from); err != nil {
		return nil, fmt.Errorf("%w: from is \"all\" or an array of {session, epoch, seq}", aep.ErrInvalidFilter)
	}
	if len(from) > s.opts.MaxFrom {
		return nil, fmt.Errorf("%w: %d resume positions, at most %d (max_from)", errLimit, len(from), s.opts.MaxFrom)
	}
	out := make([]Resume, 0, len(from))
	for _, r := range from {
		if r == nil || r.Session == "" || r.Epoch < 0 || r.Seq < 0 {
			return nil, fmt.Errorf("%w: a resume position is {session, epoch, seq}", aep.ErrInvalidFilter)
		}
		out = append(out, *r)
	}
	return out, nil
}

// accept is the subscription's live policy: its filter.
func (sub *Subscription) accept(it *item) (*item, bool) { return it, sub.Filter.Match(it.ev) }

// message renders an event for the wire: down-levelled to the ceiling
// when it is below the event's capture (AEP-0001 §8.2; never more than
// stored), the stored bytes otherwise.
func (sub *Subscription) message(it *item) []byte {
	if sub.Ceiling == nil || *sub.Ceiling >= it.capture {
		return it.line
	}
	v, err := aep.Decode(it.line) // a private copy: Downlevel edits in place
	if err != nil {
		return nil
	}
	ev, _ := v.(map[string]any)
	b, err := aep.Canonical(aep.Downlevel(ev, *sub.Ceiling))
	if err != nil {
		return nil
	}
	return b
}

// open plans the replay and subscribes to the live feed in one step
// under the server's lock: everything stored before is replayed,
// everything after is live, nothing twice.
func (s *Server) open(sub *Subscription) ([]replayPart, *eventstream.Sub[*item]) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var plan []replayPart
	if sub.All || len(sub.From) > 0 {
		plan = s.store.plan(sub.All, sub.From)
	}
	live := s.hub.Subscribe(eventstream.Policy[*item]{
		Accept:    sub.accept,
		Droppable: func(it *item) bool { return it.rank <= 1 }, // debug, info (AEP-0003 §8.4)
		Capacity:  s.opts.Queue,
	})
	return plan, live
}

// replay reads the planned parts and hands each event passing the filter
// to emit; exhausted is called first for a part whose position predates
// the buffer. Agent-scoped events are never in a plan.
func (sub *Subscription) replay(plan []replayPart, exhausted func(replayPart) error, emit func(*item) error) error {
	for _, p := range plan {
		if p.exhausted {
			if err := exhausted(p); err != nil {
				return err
			}
		}
		err := p.read(func(line []byte) error {
			h, err := aep.ParseHeader(line)
			if err != nil {
				return nil
			}
			it, err := newItem(h, line)
			if err != nil || !sub.Filter.Match(it.ev) {
				return nil
			}
			return emit(it)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// serveSSE is GET /stream (AEP-0003 §3.3): replay (from, Last-Event-ID),
// then live events, each as event: type, id: position, data: the event;
// a ": ping" comment every Ping. ?live=0 ends after the replay.
func (s *Server) serveSSE(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	sub, err := s.ParseSubscription(q.Get("filter"), q.Get("capture"), q.Get("from"), r.Header.Get("Last-Event-ID"))
	if err != nil {
		code := "invalid-filter"
		if errors.Is(err, errLimit) {
			code = "limit-exceeded"
		}
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": code, "detail": err.Error()})
		return
	}
	plan, live := s.open(sub)
	defer live.Close()
	sse, err := eventstream.NewSSE(w, s.opts.WriteTimeout)
	if err != nil {
		return
	}
	msg := func(it *item) (eventstream.Message, bool) {
		b := sub.message(it)
		return eventstream.Message{Event: it.typ, ID: it.id, Data: b}, b != nil
	}
	err = sub.replay(plan, func(p replayPart) error {
		return sse.Comment(fmt.Sprintf("replay-exhausted %s %d:%d", oneLine(p.session), p.earliest.epoch, p.earliest.seq))
	}, func(it *item) error {
		m, ok := msg(it)
		if !ok {
			return nil
		}
		return sse.Send(m)
	})
	if err == nil {
		err = sse.Flush()
	}
	if err != nil || q.Get("live") == "0" {
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(s.ctx, cancel)()
	err = eventstream.Pump(ctx, sse, live, s.opts.Ping, msg)
	switch {
	case errors.Is(err, eventstream.ErrOverflow):
		_ = sse.Comment("overflow: the consumer fell behind; resume with Last-Event-ID")
	case errors.Is(err, eventstream.ErrClosed) || s.ctx.Err() != nil:
		_ = sse.Comment("shutting-down")
	default:
		return
	}
	_ = sse.Flush()
}

func oneLine(s string) string { return strings.NewReplacer("\r", " ", "\n", " ").Replace(s) }
