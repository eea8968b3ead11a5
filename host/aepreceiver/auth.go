package aepreceiver

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/acptap/acptap/host/httpguard"
	"github.com/acptap/acptap/internal/private"
)

// TokenFile is the generated token's file under the relay's root. The
// leading underscore keeps it apart from agent directories (an agent
// named "_token" is stored percent-encoded).
const TokenFile = "_token"

// ReadToken reads a token file: its first line, trimmed. An empty token
// is an error.
func ReadToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	tok, _, _ := strings.Cut(string(b), "\n")
	tok = strings.TrimSpace(tok)
	if tok == "" {
		return "", fmt.Errorf("token file %s is empty", path)
	}
	return tok, nil
}

// LoadOrCreateToken returns the token stored at path, or creates one (32
// random bytes, hex) in a new file of mode 0600; created says which.
func LoadOrCreateToken(path string) (tok string, created bool, err error) {
	tok, err = ReadToken(path)
	if err == nil {
		return tok, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	if err := private.MkdirAll(filepath.Dir(path)); err != nil {
		return "", false, err
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", false, err
	}
	tok = hex.EncodeToString(b[:])
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, private.FileMode)
	if err != nil {
		return "", false, fmt.Errorf("token file: %w", err)
	}
	_, err = f.WriteString(tok + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", false, fmt.Errorf("token file: %w", err)
	}
	return tok, true, nil
}

// IsLoopback reports whether a listen address (host:port) binds loopback
// only: a loopback IP or the name localhost. An empty host, 0.0.0.0 or
// :: binds every interface.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// guard checks, before any handler: the Host header (and Origin, when a
// browser sends one) names this relay, not a foreign name a DNS
// rebinding attack resolves to loopback; then the bearer token, on every
// path but GET /healthz.
func (s *Server) guard(next http.Handler) http.Handler {
	hosts := httpguard.Hosts{Allow: s.opts.AllowHosts}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := hosts.Check(r); err != nil {
			code := "forbidden-host"
			if errors.Is(err, httpguard.ErrForeignOrigin) {
				code = "forbidden-origin"
			}
			writeJSON(w, http.StatusForbidden, map[string]any{"error": code, "detail": err.Error() + " (--allow-host adds names)"})
			return
		}
		if r.URL.Path != "/healthz" {
			switch s.authorized(r) {
			case http.StatusUnauthorized:
				w.Header().Set("WWW-Authenticate", `Bearer realm="acptap relay"`)
				writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "unauthorized", "detail": "send Authorization: Bearer <token>"})
				return
			case http.StatusForbidden:
				writeJSON(w, http.StatusForbidden, map[string]any{"error": "forbidden", "detail": "the token is not this relay's"})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// authorized is 0 when the request carries the token (or none is
// required), 401 when it carries none, 403 when it carries another. A
// browser's EventSource cannot set headers, so GET /stream also takes
// ?access_token= (AEP-0003 §8.1; never logged).
func (s *Server) authorized(r *http.Request) int {
	query := ""
	if r.URL.Path == "/stream" {
		query = "access_token"
	}
	return httpguard.Bearer(r, s.opts.Token, query)
}
