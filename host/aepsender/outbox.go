package aepsender

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/sdk/aep"
)

// Defaults.
const (
	DefaultCapacity   = 10000
	DefaultBatchMax   = 500
	DefaultTimeout    = 10 * time.Second
	DefaultMinBackoff = 100 * time.Millisecond
	DefaultMaxBackoff = 5 * time.Second
)

// Options configure an Outbox.
type Options struct {
	// Base is the relay's base URL; events go to {Base}/events.
	Base string
	// Capacity bounds the events held (queued and in flight).
	Capacity int
	// BatchMax is the most events in one POST.
	BatchMax int
	// Client posts the batches (default: a client with DefaultTimeout).
	Client *http.Client
	// MinBackoff and MaxBackoff bound the wait between retries.
	MinBackoff, MaxBackoff time.Duration
	Logger                 hclog.Logger
	// Token, when set, is sent as Authorization: Bearer (AEP-0003 §8.1).
	Token string
}

// Stats count what became of the events given to the outbox.
type Stats struct {
	// Delivered events were accepted by the relay (2xx).
	Delivered uint64
	// Dropped events were evicted because the outbox was full, by severity.
	Dropped map[string]uint64
	// Rejected events were refused by the relay (4xx) and not retried.
	Rejected uint64
	// Unsent events were still held when Shutdown gave up.
	Unsent uint64
	// Retries counts failed attempts that were retried.
	Retries uint64
}

// Lost is every event that did not reach the relay.
func (s Stats) Lost() uint64 {
	n := s.Rejected + s.Unsent
	for _, v := range s.Dropped {
		n += v
	}
	return n
}

type item struct {
	line []byte
	sev  string
	rank int
}

// Outbox holds AEP events for a relay. Event is safe for concurrent use.
type Outbox struct {
	opts     Options
	endpoint string
	log      hclog.Logger

	mu       sync.Mutex
	queue    []item // waiting, oldest first
	inflight int    // events taken by the sender
	stats    Stats
	closing  bool
	warned   bool // a drop was logged

	wake    chan struct{}
	idle    chan struct{} // signalled when the outbox is empty
	done    chan struct{}
	stop    func()
	started bool
	once    sync.Once
}

// New checks the options and returns an outbox; Start begins sending.
func New(opts Options) (*Outbox, error) {
	u, err := url.Parse(opts.Base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("aep relay %q: not an http(s) base URL", opts.Base)
	}
	if opts.Capacity <= 0 {
		opts.Capacity = DefaultCapacity
	}
	if opts.BatchMax <= 0 {
		opts.BatchMax = DefaultBatchMax
	}
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: DefaultTimeout}
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = DefaultMinBackoff
	}
	if opts.MaxBackoff < opts.MinBackoff {
		opts.MaxBackoff = max(DefaultMaxBackoff, opts.MinBackoff)
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	return &Outbox{opts: opts, endpoint: strings.TrimRight(opts.Base, "/") + "/events", log: opts.Logger,
		stats: Stats{Dropped: map[string]uint64{}},
		wake:  make(chan struct{}, 1), idle: make(chan struct{}, 1), done: make(chan struct{})}, nil
}

// Event adds one event (one JSON object, no LF) to the outbox. It never
// blocks: when the outbox is full, the oldest waiting debug or info event
// makes room; when there is none, a new debug or info event is dropped,
// and a new event of higher severity evicts the oldest waiting one.
func (o *Outbox) Event(_ string, event []byte) {
	var h struct{ Severity string }
	_ = json.Unmarshal(event, &h)
	if h.Severity == "" {
		h.Severity = "info"
	}
	it := item{line: append([]byte(nil), event...), sev: h.Severity, rank: aep.SeverityRank(h.Severity)}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closing {
		o.dropLocked(it)
		return
	}
	if len(o.queue)+o.inflight >= o.opts.Capacity {
		victim := -1
		for i, q := range o.queue {
			if q.rank <= 1 {
				victim = i
				break
			}
		}
		switch {
		case victim < 0 && it.rank <= 1:
			o.dropLocked(it)
			return
		case victim < 0 && len(o.queue) == 0:
			o.dropLocked(it) // everything held is in flight
			return
		case victim < 0:
			victim = 0
		}
		o.dropLocked(o.queue[victim])
		o.queue = append(o.queue[:victim], o.queue[victim+1:]...)
	}
	o.queue = append(o.queue, it)
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

func (o *Outbox) dropLocked(it item) {
	o.stats.Dropped[it.sev]++
	if !o.warned {
		o.warned = true
		o.log.Warn("aep relay outbox full: dropping events (debug and info first); the count is logged at exit",
			"capacity", o.opts.Capacity, "severity", it.sev)
	}
}

// Stats returns the counters so far.
func (o *Outbox) Stats() Stats {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.stats
	s.Dropped = map[string]uint64{}
	for k, v := range o.stats.Dropped {
		s.Dropped[k] = v
	}
	return s
}

// ErrNotStarted is returned by Shutdown for an outbox never started.
var ErrNotStarted = errors.New("aep relay outbox not started")
