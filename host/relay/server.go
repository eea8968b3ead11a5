package relay

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/sdk/aep"
)

// Limits of the reference relay.
const (
	DefaultMaxBody  = 16 << 20 // AEP_MAX_BODY
	DefaultMaxBatch = 10000    // AEP_MAX_BATCH
	// DefaultAddr is the reference relay's address.
	DefaultAddr = "127.0.0.1:8787"
)

// Options configure a Server.
type Options struct {
	// Root is the directory events are appended under.
	Root     string
	MaxBody  int64
	MaxBatch int
	Logger   hclog.Logger
}

// Counts are what the server did since it started.
type Counts struct {
	Accepted, Duplicates, Rejected uint64
}

// Server is the relay's HTTP handler and its store.
type Server struct {
	opts      Options
	log       hclog.Logger
	validator *aep.Validator
	mux       *http.ServeMux

	mu     sync.Mutex // serialises admission and appends
	stream aep.Stream
	store  store
	counts Counts
}

// New opens the store under opts.Root, replays it (dedupe and ordering
// state), and returns the server.
func New(opts Options) (*Server, error) {
	if opts.Root == "" {
		return nil, errors.New("relay: no store directory")
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = DefaultMaxBatch
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if err := os.MkdirAll(opts.Root, 0o700); err != nil {
		return nil, fmt.Errorf("relay store: %w", err)
	}
	v, err := aep.DefaultValidator()
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, log: opts.Logger, validator: v, store: store{root: opts.Root, files: map[string]*os.File{}}}
	n, err := s.store.load(&s.stream)
	if err != nil {
		return nil, fmt.Errorf("relay store: %w", err)
	}
	if n > 0 {
		s.log.Info("relay store replayed", "events", n, "root", opts.Root)
	}
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("POST /events", s.ingest)
	s.mux.HandleFunc("GET /events", s.discovery)
	s.mux.HandleFunc("GET /.well-known/aep", s.discovery)
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"ok": true})
	})
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Counts returns the counters.
func (s *Server) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}

// Close closes the store's files.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.store.close()
}

func (s *Server) discovery(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"aep":       []string{aep.Version},
		"endpoints": map[string]any{"events": "/events"},
		"capabilities": map[string]any{
			"filters": false, "replay": map[string]any{"buffer": 0, "all": false},
			"capture": []string{"none", "metadata", "redacted", "full"}, "control": false, "roster": false,
			"experimental": []string{},
		},
	})
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
