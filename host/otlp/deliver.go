package otlp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/acptap/acptap/host/otlp/spool"
)

// Backoff bounds.
const (
	DefaultMinBackoff = 100 * time.Millisecond
	DefaultMaxBackoff = 5 * time.Second
	// claimRetry is how often a process that is not the spool's sender
	// tries to become it.
	claimRetry = time.Second
)

// DeliveryStats count what the sender did.
type DeliveryStats struct {
	Segments   uint64
	LogRecords uint64
	Spans      uint64
	Rejected   uint64 // refused by the collector (permanent error or partial success)
	Retries    uint64
	LastError  string
}

// Sender moves the spool's segments, oldest first, to the collector: one
// logs request and one traces request per segment; a segment leaves the
// spool only once both are accepted (or refused for good), so a failure
// or a kill re-sends it — the same bytes, the same ids.
type Sender struct {
	Spool      *spool.Spool
	Client     *Client
	MinBackoff time.Duration
	MaxBackoff time.Duration
	Logger     hclog.Logger
	// Progress, when set, is called after each delivered segment.
	Progress func(DeliveryStats)

	mu    sync.Mutex
	stats DeliveryStats
	wake  chan struct{}
	once  sync.Once
}

func (s *Sender) init() {
	s.once.Do(func() {
		s.wake = make(chan struct{}, 1)
		if s.MinBackoff <= 0 {
			s.MinBackoff = DefaultMinBackoff
		}
		if s.MaxBackoff < s.MinBackoff {
			s.MaxBackoff = max(DefaultMaxBackoff, s.MinBackoff)
		}
		if s.Logger == nil {
			s.Logger = hclog.NewNullLogger()
		}
	})
}

// Wake says the spool has new segments.
func (s *Sender) Wake() {
	s.init()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Stats returns the counters so far.
func (s *Sender) Stats() DeliveryStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Run delivers until ctx is done. Only one process sends from a spool at
// a time: Run claims the spool while it holds segments and releases it
// once it is empty, so several recordings can share one. With untilEmpty
// it returns nil as soon as the spool is empty.
func (s *Sender) Run(ctx context.Context, untilEmpty bool) error {
	s.init()
	for {
		if s.Spool.Empty() {
			if untilEmpty {
				return nil
			}
			if err := sleep(ctx, claimRetry, s.wake); err != nil {
				return err
			}
			continue
		}
		release, ok, err := s.Spool.Claim()
		if err != nil {
			return err
		}
		if !ok {
			if err := sleep(ctx, claimRetry, nil); err != nil {
				return err
			}
			continue
		}
		err = s.drain(ctx)
		release()
		if err != nil {
			return err
		}
	}
}

// drain delivers the claimed spool until it is empty.
func (s *Sender) drain(ctx context.Context) error {
	backoff := s.MinBackoff
	down := false
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		seg, err := s.Spool.Peek()
		if err != nil || seg == nil {
			return err
		}
		err = s.send(ctx, seg)
		if err == nil || errors.Is(err, ErrPermanent) {
			if err != nil {
				s.Logger.Warn("otlp: the collector refused a segment; not retried", "segment", seg.Name, "error", err)
				s.count(func(st *DeliveryStats) { st.Rejected += uint64(len(seg.Items)); st.LastError = err.Error() })
			}
			if aerr := s.Spool.Ack(seg.Name); aerr != nil {
				return aerr
			}
			backoff = s.MinBackoff
			if down {
				down = false
				s.Logger.Info("otlp: collector reachable again", "target", s.Client.Describe())
			}
			if s.Progress != nil {
				s.Progress(s.Stats())
			}
			continue
		}
		s.Spool.Release(seg.Name)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.count(func(st *DeliveryStats) { st.Retries++; st.LastError = err.Error() })
		if !down {
			down = true
			s.Logger.Warn("otlp: collector unreachable; records wait in the spool and are retried", "target", s.Client.Describe(), "error", err)
		}
		if err := sleep(ctx, backoff, nil); err != nil {
			return err
		}
		backoff = min(2*backoff, s.MaxBackoff)
	}
}

func (s *Sender) count(f func(*DeliveryStats)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.stats)
}

func sleep(ctx context.Context, d time.Duration, wake <-chan struct{}) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-wake:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// send exports one segment: its log records, then its spans.
func (s *Sender) send(ctx context.Context, seg *spool.Segment) error {
	var rl []*logspb.ResourceLogs
	var rs []*tracepb.ResourceSpans
	for _, it := range seg.Items {
		switch it.Kind {
		case spool.Logs:
			m := &logspb.ResourceLogs{}
			if err := proto.Unmarshal(it.Data, m); err != nil {
				return fmt.Errorf("spool segment %s: %w: %w", seg.Name, ErrPermanent, err)
			}
			rl = mergeLogs(rl, m)
		case spool.Spans:
			m := &tracepb.ResourceSpans{}
			if err := proto.Unmarshal(it.Data, m); err != nil {
				return fmt.Errorf("spool segment %s: %w: %w", seg.Name, ErrPermanent, err)
			}
			rs = mergeSpans(rs, m)
		}
	}
	var nl, ns int
	if len(rl) > 0 {
		rej, err := s.Client.ExportLogs(ctx, rl)
		if err != nil {
			return err
		}
		s.rejected(rej)
		for _, r := range rl {
			for _, sl := range r.ScopeLogs {
				nl += len(sl.LogRecords)
			}
		}
	}
	if len(rs) > 0 {
		rej, err := s.Client.ExportSpans(ctx, rs)
		if err != nil {
			return err
		}
		s.rejected(rej)
		for _, r := range rs {
			for _, ss := range r.ScopeSpans {
				ns += len(ss.Spans)
			}
		}
	}
	s.count(func(st *DeliveryStats) { st.Segments++; st.LogRecords += uint64(nl); st.Spans += uint64(ns) })
	return nil
}

func (s *Sender) rejected(r Rejected) {
	if r.Count > 0 || r.Message != "" {
		s.Logger.Warn("otlp: the collector rejected part of a request", "rejected", r.Count, "message", r.Message)
		s.count(func(st *DeliveryStats) { st.Rejected += uint64(r.Count) })
	}
}

// mergeLogs appends m, folding it into the last entry when resource and
// scope are the same (fewer, smaller requests; order kept).
func mergeLogs(rl []*logspb.ResourceLogs, m *logspb.ResourceLogs) []*logspb.ResourceLogs {
	if n := len(rl); n > 0 && proto.Equal(rl[n-1].Resource, m.Resource) && len(m.ScopeLogs) == 1 {
		last := rl[n-1].ScopeLogs[len(rl[n-1].ScopeLogs)-1]
		if proto.Equal(last.Scope, m.ScopeLogs[0].Scope) {
			last.LogRecords = append(last.LogRecords, m.ScopeLogs[0].LogRecords...)
			return rl
		}
	}
	return append(rl, m)
}

func mergeSpans(rs []*tracepb.ResourceSpans, m *tracepb.ResourceSpans) []*tracepb.ResourceSpans {
	if n := len(rs); n > 0 && proto.Equal(rs[n-1].Resource, m.Resource) && len(m.ScopeSpans) == 1 {
		last := rs[n-1].ScopeSpans[len(rs[n-1].ScopeSpans)-1]
		if proto.Equal(last.Scope, m.ScopeSpans[0].Scope) {
			last.Spans = append(last.Spans, m.ScopeSpans[0].Spans...)
			return rs
		}
	}
	return append(rs, m)
}
