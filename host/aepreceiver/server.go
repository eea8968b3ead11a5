package aepreceiver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/eventstream"
	"github.com/acptap/acptap/internal/private"
	"github.com/acptap/acptap/sdk/aep"
	"github.com/acptap/acptap/sdk/aep/aepcheck"
)

// Limits and defaults of the relay.
const (
	DefaultMaxBody  = 16 << 20 // AEP_MAX_BODY
	DefaultMaxBatch = 10000    // AEP_MAX_BATCH
	// DefaultAddr is the reference relay's address.
	DefaultAddr = "127.0.0.1:8787"
	// DefaultBuffer is the replay buffer: events per session (AEP_BUFFER).
	DefaultBuffer = 10000
	// DefaultMaxSessions bounds the sessions whose replay buffer is held
	// in memory (AEP_MAX_SESSIONS); a session beyond it is indexed again
	// from its file when a consumer resumes in it.
	DefaultMaxSessions = 500
	// DefaultMaxFrom bounds the resume positions of one subscription.
	DefaultMaxFrom = 500
	// DefaultMaxOpenFiles bounds the session files held open.
	DefaultMaxOpenFiles = 64
	// DefaultIdleClose closes a session file not written for this long.
	DefaultIdleClose = time.Minute
	// DefaultMaxBodies bounds the request bodies read at once: with 16
	// MiB bodies, 4 is the relay's ingest memory ceiling (about 64 MiB
	// of bodies plus their parsing).
	DefaultMaxBodies = 4
	// DefaultBodyTimeout bounds reading one request body, and the wait
	// for a turn to read it.
	DefaultBodyTimeout = 30 * time.Second
	// DefaultQueue is a consumer's live queue (events); a full queue drops
	// debug and info events and disconnects on anything more severe.
	DefaultQueue = 4096
)

// Options configure a Server.
type Options struct {
	// Root is the directory events are appended under.
	Root     string
	MaxBody  int64
	MaxBatch int
	Logger   hclog.Logger
	// Token, when set, is required as Authorization: Bearer on every
	// request but GET /healthz.
	Token string
	// AllowHosts are host names (beside loopback names and IP literals)
	// accepted in Host and Origin: the names a team reaches the relay by.
	AllowHosts []string
	// Buffer is the replay buffer per session (DefaultBuffer).
	Buffer int
	// MaxSessions bounds the replay buffers held (DefaultMaxSessions).
	MaxSessions int
	// MaxFrom bounds a subscription's resume positions (DefaultMaxFrom).
	MaxFrom int
	// Ping is the SSE heartbeat and WebSocket ping interval
	// (eventstream.DefaultPing).
	Ping time.Duration
	// WriteTimeout bounds one write to a consumer.
	WriteTimeout time.Duration
	// MaxOpenFiles, IdleClose: see the defaults.
	MaxOpenFiles int
	IdleClose    time.Duration
	// MaxBodies, BodyTimeout: see the defaults.
	MaxBodies   int
	BodyTimeout time.Duration
	// Queue is a consumer's live queue (DefaultQueue).
	Queue int
}

// Counts are what the server did since it started.
type Counts struct {
	Accepted, Duplicates, Rejected, StoreFailures uint64
	// PeakBodies is the most request bodies read at once.
	PeakBodies int
}

// Server is the relay's HTTP handler, its store and its fan-out.
type Server struct {
	opts      Options
	log       hclog.Logger
	validator *aepcheck.Validator
	handler   http.Handler
	hub       *eventstream.Hub[*item]
	bodies    chan struct{}

	ctx    context.Context // ends at Drain: streams and sockets close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex // serialises admission, appends, publishing and replay plans
	stream aep.Stream
	store  *eventStore
	counts Counts
	inBody int
	closed bool
}

// New opens the store under opts.Root, replays it (dedupe, ordering and
// the replay buffer), and returns the server.
func New(opts Options) (*Server, error) {
	if opts.Root == "" {
		return nil, errors.New("relay: no store directory")
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&opts.MaxBatch, DefaultMaxBatch)
	def(&opts.Buffer, DefaultBuffer)
	def(&opts.MaxFrom, DefaultMaxFrom)
	def(&opts.MaxSessions, DefaultMaxSessions)
	def(&opts.MaxOpenFiles, DefaultMaxOpenFiles)
	def(&opts.MaxBodies, DefaultMaxBodies)
	def(&opts.Queue, DefaultQueue)
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.IdleClose <= 0 {
		opts.IdleClose = DefaultIdleClose
	}
	if opts.BodyTimeout <= 0 {
		opts.BodyTimeout = DefaultBodyTimeout
	}
	if opts.Ping <= 0 {
		opts.Ping = eventstream.DefaultPing
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if err := private.MkdirAll(opts.Root); err != nil {
		return nil, fmt.Errorf("relay store: %w", err)
	}
	v, err := aepcheck.DefaultValidator()
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, log: opts.Logger, validator: v, hub: eventstream.NewHub[*item](),
		bodies: make(chan struct{}, opts.MaxBodies),
		store:  newEventStore(opts.Root, opts.Logger, opts.MaxOpenFiles, opts.IdleClose, opts.Buffer, opts.MaxSessions)}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	n, err := s.store.load(&s.stream)
	if err != nil {
		return nil, fmt.Errorf("relay store: %w", err)
	}
	if n > 0 {
		s.log.Info("relay store replayed", "events", n, "root", opts.Root)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /events", s.ingest)
	mux.HandleFunc("GET /events", s.discovery)
	mux.HandleFunc("GET /.well-known/aep", s.discovery)
	mux.HandleFunc("GET /stream", s.serveSSE)
	mux.HandleFunc("GET /socket", s.serveSocket)
	mux.HandleFunc("GET /healthz", s.healthz)
	s.handler = s.guard(mux)
	s.wg.Add(1)
	go s.janitor()
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Counts returns the counters.
func (s *Server) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}

// Drain ends every consumer's stream (SSE: a ": shutting-down" comment
// and the end of the response; WebSocket: a closing frame with the
// positions delivered, then close 1001), so http.Server.Shutdown does
// not wait on them. Register it with RegisterOnShutdown.
func (s *Server) Drain() {
	s.cancel()
	s.hub.Close()
}

// Close drains, then syncs and closes the store's files.
func (s *Server) Close() error {
	s.Drain()
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return s.store.close()
}

// janitor closes idle session files.
func (s *Server) janitor() {
	defer s.wg.Done()
	t := time.NewTicker(max(s.opts.IdleClose/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case now := <-t.C:
			s.mu.Lock()
			s.store.closeIdle(now)
			s.mu.Unlock()
		}
	}
}

// OpenFiles is how many session files are open.
func (s *Server) OpenFiles() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.store.open)
}

// Capabilities are what the relay serves, the hello and discovery shape
// (AEP-0003 §3.4, §4): exactly what is implemented.
func (s *Server) Capabilities() map[string]any {
	return map[string]any{
		"filters":      []string{"attr-match"},
		"replay":       map[string]any{"buffer": s.opts.Buffer, "all": true},
		"capture":      []string{"none", "metadata", "redacted", "full"},
		"control":      map[string]any{"accepts": []string{}},
		"experimental": map[string]any{},
	}
}

func (s *Server) discovery(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"aep":          []string{aep.Version},
		"role":         "collector",
		"endpoints":    map[string]any{"events": "/events", "stream": "/stream", "socket": "/socket"},
		"capabilities": s.Capabilities(),
	})
}

// healthz is {"ok":true} for anyone; with the token (when one is set) it
// adds the counts
// (topology stays behind auth).
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	if s.opts.Token != "" && s.authorized(r) == 0 {
		c := s.Counts()
		s.mu.Lock()
		sessions := len(s.store.index)
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "accepted": c.Accepted, "duplicates": c.Duplicates,
			"rejected": c.Rejected, "store_failures": c.StoreFailures, "sessions": sessions, "subscribers": s.hub.Len()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// supportedVersion accepts AEP-Version 0.1 (and 0.1.x).
func supportedVersion(v string) bool {
	v = strings.TrimSpace(v)
	return v == aep.Version || strings.HasPrefix(v, aep.Version+".")
}
