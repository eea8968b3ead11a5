package otlp

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/protobuf/proto"

	"github.com/acptap/acptap/host/otlp/spool"
	"github.com/acptap/acptap/sdk/aep"
)

// Exporter defaults.
const (
	DefaultQueue    = 10000
	DefaultBatchMax = 512
	// DefaultLinger is how long the projector gathers events before it
	// writes a segment.
	DefaultLinger = 100 * time.Millisecond
)

// ExporterOptions configure the live exporter.
type ExporterOptions struct {
	Spool  *spool.Spool
	Client *Client
	// MaxCapture down-levels events before export (default metadata).
	MaxCapture aep.Level
	Version    string
	Info       func(session string) Agent
	// Queue bounds the events waiting in memory to be spooled.
	Queue    int
	BatchMax int
	Linger   time.Duration
	// MinBackoff and MaxBackoff bound the sender's retries.
	MinBackoff, MaxBackoff time.Duration
	Logger                 hclog.Logger
}

// ExportStats say what became of the events given to the exporter.
type ExportStats struct {
	Events uint64
	// Queued events dropped because the in-memory queue was full, and
	// items the spool dropped to stay in bound, by AEP severity.
	Dropped map[string]uint64
	// Invalid events could not be decoded (never expected from a plugin).
	Invalid  uint64
	Delivery DeliveryStats
	// Spooled is what the spool still holds at the end (sent by the next
	// run or by acptap export --otlp).
	Spooled int
}

type queued struct {
	line []byte
	rank int
}

// Exporter is the recording side: Event takes AEP events (the store sink's
// forwarder) and never blocks; a projector goroutine maps them and writes
// them to the spool; a sender goroutine delivers the spool.
type Exporter struct {
	opts ExporterOptions
	proj *Projector
	snd  *Sender
	log  hclog.Logger

	mu      sync.Mutex
	queue   []queued
	closing bool
	stats   ExportStats
	warned  bool
	// undeclared counts queue drops not yet declared downstream.
	undeclared [6]uint64
	started    bool

	wake     chan struct{}
	projDone chan struct{}
	sendDone chan struct{}
	stopSend func()
	once     sync.Once
}

// NewExporter returns an exporter; Start begins its goroutines.
func NewExporter(opts ExporterOptions) *Exporter {
	if opts.Queue <= 0 {
		opts.Queue = DefaultQueue
	}
	if opts.BatchMax <= 0 {
		opts.BatchMax = DefaultBatchMax
	}
	if opts.Linger <= 0 {
		opts.Linger = DefaultLinger
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	e := &Exporter{opts: opts, log: opts.Logger, proj: NewProjector(opts.MaxCapture, opts.Version, opts.Info),
		wake: make(chan struct{}, 1), projDone: make(chan struct{}), sendDone: make(chan struct{}),
		stats: ExportStats{Dropped: map[string]uint64{}}}
	e.snd = &Sender{Spool: opts.Spool, Client: opts.Client, MinBackoff: opts.MinBackoff, MaxBackoff: opts.MaxBackoff, Logger: opts.Logger}
	return e
}

// Start runs the projector and, when there is a client, the sender; the
// sender first delivers what earlier runs left in the spool.
func (e *Exporter) Start(ctx context.Context) {
	e.mu.Lock()
	e.started = true
	e.mu.Unlock()
	go e.project()
	sctx, cancel := context.WithCancel(ctx)
	e.stopSend = cancel
	go func() {
		defer close(e.sendDone)
		if e.opts.Client == nil {
			return
		}
		if err := e.snd.Run(sctx, false); err != nil && !errors.Is(err, context.Canceled) {
			e.log.Error("otlp sender stopped", "error", err)
		}
	}()
}

// Event implements storesink.EventForwarder. It never blocks: when the
// queue is full the oldest debug or info event makes room, and a new debug
// or info event with none to evict is dropped; every drop is counted.
func (e *Exporter) Event(_ string, event []byte) {
	var h struct{ Severity string }
	_ = json.Unmarshal(event, &h)
	q := queued{line: append([]byte(nil), event...), rank: aep.SeverityRank(h.Severity)}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stats.Events++
	if e.closing {
		e.dropLocked(q.rank)
		return
	}
	if len(e.queue) >= e.opts.Queue {
		victim := -1
		for i, it := range e.queue {
			if it.rank <= spool.LowRank {
				victim = i
				break
			}
		}
		switch {
		case victim < 0 && q.rank <= spool.LowRank:
			e.dropLocked(q.rank)
			return
		case victim < 0:
			victim = 0
		}
		e.dropLocked(e.queue[victim].rank)
		e.queue = append(e.queue[:victim], e.queue[victim+1:]...)
	}
	e.queue = append(e.queue, q)
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

func (e *Exporter) dropLocked(rank int) {
	e.stats.Dropped[aep.Severities[min(rank, 5)]]++
	e.undeclared[min(rank, 5)]++
	if !e.warned {
		e.warned = true
		e.log.Warn("otlp: export queue full; dropping events (debug and info first); the count is logged at exit", "queue", e.opts.Queue)
	}
}

func (e *Exporter) take() ([]queued, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	q := e.queue
	e.queue = nil
	return q, e.closing
}

// takeUndeclared returns the queue drops not yet declared downstream.
func (e *Exporter) takeUndeclared() [6]uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	d := e.undeclared
	e.undeclared = [6]uint64{}
	return d
}

// project maps queued events into spool segments until Shutdown.
func (e *Exporter) project() {
	defer close(e.projDone)
	for {
		batch, closing := e.take()
		if len(batch) == 0 && !closing {
			<-e.wake
			// Gather a little more, so that a segment holds a turn, not an
			// event.
			t := time.NewTimer(e.opts.Linger)
			select {
			case <-t.C:
			case <-e.wake:
				// Shutdown (or more events): go on at once when closing.
				t.Stop()
			}
			continue
		}
		var items []spool.Item
		for _, q := range batch {
			its, err := e.proj.Project(q.line)
			if err != nil {
				e.mu.Lock()
				e.stats.Invalid++
				e.mu.Unlock()
				e.log.Warn("otlp: event not exported", "error", err)
				continue
			}
			items = append(items, its...)
		}
		if closing {
			items = append(items, e.proj.Flush()...)
		}
		if it, ok := DropNotice(e.takeUndeclared(), e.opts.Version, time.Now()); ok {
			items = append(items, it) // the queue's drops, declared downstream
		}
		e.spool(items)
		if closing {
			if rest, _ := e.take(); len(rest) == 0 {
				return
			}
		}
	}
}

// spool writes items in segments of at most BatchMax, and declares what
// the spool dropped to stay in bound with a warning record of its own.
func (e *Exporter) spool(items []spool.Item) {
	for len(items) > 0 {
		n := min(len(items), e.opts.BatchMax)
		dropped, err := e.opts.Spool.Append(items[:n])
		items = items[n:]
		if err != nil {
			e.log.Error("otlp: spool write failed; records lost", "error", err, "records", n)
			e.mu.Lock()
			e.stats.Dropped["unspooled"] += uint64(n)
			e.mu.Unlock()
			continue
		}
		e.noteDrops(dropped)
	}
	e.snd.Wake()
}

func (e *Exporter) noteDrops(dropped [6]uint64) {
	var total uint64
	e.mu.Lock()
	for r, n := range dropped {
		if n > 0 {
			e.stats.Dropped[aep.Severities[r]] += n
			total += n
		}
	}
	e.mu.Unlock()
	if total == 0 {
		return
	}
	e.log.Warn("otlp: spool full; dropped records (debug and info first)", "dropped", dropped)
	if it, ok := DropNotice(dropped, e.opts.Version, time.Now()); ok {
		if _, err := e.opts.Spool.Append([]spool.Item{it}); err != nil {
			e.log.Error("otlp: the drop notice could not be spooled", "error", err)
		}
	}
}

// Shutdown stops taking events, spools what is queued (and the spans of
// anything still open), lets the sender deliver until ctx is done, and
// returns the counters. What is not delivered stays in the spool.
func (e *Exporter) Shutdown(ctx context.Context) ExportStats {
	e.once.Do(func() {
		e.mu.Lock()
		e.closing = true
		started := e.started
		e.mu.Unlock()
		if !started {
			return
		}
		select {
		case e.wake <- struct{}{}:
		default:
		}
		<-e.projDone
		if e.opts.Client != nil {
			for !e.opts.Spool.Empty() && ctx.Err() == nil {
				e.snd.Wake()
				sleep(ctx, 20*time.Millisecond, nil)
			}
		}
		e.stopSend()
		<-e.sendDone
	})
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.stats
	s.Dropped = map[string]uint64{}
	for k, v := range e.stats.Dropped {
		s.Dropped[k] = v
	}
	s.Delivery = e.snd.Stats()
	s.Spooled = e.opts.Spool.Len()
	return s
}

// DropNotice is the record that declares spool drops: a WARN log record
// (event_name acptap.otlp.dropped, kept at warning rank) counting the
// dropped records by AEP severity.
func DropNotice(dropped [6]uint64, version string, at time.Time) (spool.Item, bool) {
	var a attrs
	var total int64
	for r, n := range dropped {
		if n > 0 {
			a.int("acptap.dropped."+aep.Severities[r], int64(n))
			total += int64(n)
		}
	}
	if total == 0 {
		return spool.Item{}, false
	}
	a.int("acptap.dropped.total", total)
	sev := severityOTLP["warning"]
	ts := unixNano(at)
	rec := &logspb.LogRecord{TimeUnixNano: ts, ObservedTimeUnixNano: ts, SeverityNumber: sev.num, SeverityText: sev.text,
		EventName: "acptap.otlp.dropped", Attributes: a}
	b, err := proto.Marshal(ResourceLogs("acptap", version, rec))
	if err != nil {
		return spool.Item{}, false
	}
	return spool.Item{Kind: spool.Logs, Rank: uint8(aep.SeverityRank("warning")), Data: b}, true
}
