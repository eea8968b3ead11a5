package ui

import (
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"sync"
	"time"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/httpguard"
	"github.com/acptap/acptap/host/store"
)

//go:embed assets
var assets embed.FS

// CookieName holds the token once a URL with it was opened.
const CookieName = "acptap_ui"

// Options configure a Server.
type Options struct {
	Store *store.Store
	// Token every request must carry; empty: a random one.
	Token string
	// Hosts are host names accepted in the Host header beside loopback
	// names, IP literals and this machine's name (httpguard.Hosts).
	Hosts []string
	Log   hclog.Logger
	// LivePoll is how often a live view looks for new records (default
	// 250 ms).
	LivePoll time.Duration
}

// Server serves the viewer.
type Server struct {
	st *store.Store
	// origins holds each origin's store when st is a central store
	// (acptap collect): <root>/<origin>/ is a store of its own.
	origins map[string]*store.Store
	token   string
	hosts   httpguard.Hosts
	log     hclog.Logger
	poll    time.Duration
	mux     *http.ServeMux
	cache   summaryCache
	mu      sync.Mutex
}

// NewToken returns a random token.
func NewToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// New builds the server for addr, the address it listens on.
func New(_ net.Addr, o Options) *Server {
	s := &Server{st: o.Store, token: o.Token, log: o.Log, poll: o.LivePoll, hosts: httpguard.Hosts{Allow: o.Hosts}}
	if s.token == "" {
		s.token = NewToken()
	}
	if s.log == nil {
		s.log = hclog.NewNullLogger()
	}
	if s.poll <= 0 {
		s.poll = 250 * time.Millisecond
	}
	s.cache.m = map[string]cached{}
	s.cache.reads = map[string]*summaryRead{}
	s.origins = centralOrigins(s.st)
	s.routes()
	return s
}

// Token is the token requests must carry.
func (s *Server) Token() string { return s.token }

func (s *Server) routes() {
	m := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets")
	m.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	m.HandleFunc("GET /{$}", s.index)
	m.HandleFunc("GET /api/sessions", s.apiSessions)
	m.HandleFunc("GET /api/session", s.apiSession)
	m.HandleFunc("GET /api/summary", s.apiSummary)
	m.HandleFunc("GET /api/wire", s.apiWire)
	m.HandleFunc("GET /api/live", s.apiLive)
	m.HandleFunc("GET /api/compare", s.apiCompare)
	m.HandleFunc("GET /export", s.export)
	s.mux = m
}

// ServeHTTP checks the request's Host, Origin and token, then serves it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// DNS rebinding: a page of evil.example resolving to 127.0.0.1 sends
	// Host: evil.example (and its Origin). Only loopback names, IP
	// literals and the names we were told to accept are served.
	if err := s.hosts.Check(r); err != nil {
		http.Error(w, "forbidden: "+err.Error(), http.StatusForbidden)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "read-only", http.StatusMethodNotAllowed)
		return
	}
	if !s.authorised(w, r) {
		http.Error(w, "forbidden: open the URL acptap ui printed (it carries the token)", http.StatusForbidden)
		return
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'")
	s.mux.ServeHTTP(w, r)
}

// authorised accepts the token from the query (and then sets the cookie)
// or from the cookie.
func (s *Server) authorised(w http.ResponseWriter, r *http.Request) bool {
	if t := r.URL.Query().Get("token"); t != "" {
		if !s.tokenOK(t) {
			return false
		}
		http.SetCookie(w, &http.Cookie{Name: CookieName, Value: s.token, Path: "/", HttpOnly: true,
			SameSite: http.SameSiteStrictMode})
		return true
	}
	c, err := r.Cookie(CookieName)
	return err == nil && s.tokenOK(c.Value)
}

func (s *Server) tokenOK(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.token)) == 1
}

func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	b, err := assets.ReadFile("assets/index.html")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	enc := json.NewEncoder(w)
	if err := enc.Encode(v); err != nil && !errors.Is(err, http.ErrHandlerTimeout) {
		return
	}
}
