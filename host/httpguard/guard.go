package httpguard

import (
	"crypto/subtle"
	"errors"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// Hosts decides which names a request may use for this server: IP
// literals (a rebinding attack needs a DNS name), loopback names
// (localhost, *.localhost), this machine's name, and Allow.
type Hosts struct {
	Allow []string
}

// ErrForeignHost and ErrForeignOrigin are the refusals of Check.
var (
	ErrForeignHost   = errors.New("the Host header names neither loopback, an IP address, nor an allowed host")
	ErrForeignOrigin = errors.New("the Origin names neither loopback, an IP address, nor an allowed host")
)

// Allowed reports whether a Host value (host[:port]) is acceptable.
func (h Hosts) Allowed(hostport string) bool {
	host := hostport
	if hh, _, err := net.SplitHostPort(hostport); err == nil {
		host = hh
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if host == "" {
		return false
	}
	if net.ParseIP(host) != nil {
		return true
	}
	host = strings.ToLower(host)
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	if name, _ := os.Hostname(); name != "" && strings.EqualFold(host, name) {
		return true
	}
	for _, a := range h.Allow {
		if strings.EqualFold(host, strings.TrimSuffix(a, ".")) {
			return true
		}
	}
	return false
}

// Check refuses a request whose Host, or Origin when present (browsers
// send it; "null" and non-http origins are refused), is not Allowed.
func (h Hosts) Check(r *http.Request) error {
	if !h.Allowed(r.Host) {
		return ErrForeignHost
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !h.Allowed(u.Host) {
			return ErrForeignOrigin
		}
	}
	return nil
}

// Bearer is 0 when the request carries token as Authorization: Bearer
// (or, when query is not "", as that query parameter: browsers'
// EventSource cannot set headers), 401 when it carries none, 403 when it
// carries another. An empty token admits everything.
func Bearer(r *http.Request, token, query string) int {
	if token == "" {
		return 0
	}
	got, ok := "", false
	if a := r.Header.Get("Authorization"); a != "" {
		scheme, tok, found := strings.Cut(a, " ")
		if !found || !strings.EqualFold(scheme, "Bearer") {
			return http.StatusUnauthorized
		}
		got, ok = strings.TrimSpace(tok), true
	} else if query != "" && r.URL.Query().Has(query) {
		got, ok = r.URL.Query().Get(query), true
	}
	if !ok {
		return http.StatusUnauthorized
	}
	if subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
		return http.StatusForbidden
	}
	return 0
}
