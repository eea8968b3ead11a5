package httpguard

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestHostsAndOrigins: foreign DNS names are refused in Host and Origin;
// IP literals, loopback names and allowed names pass.
func TestHostsAndOrigins(t *testing.T) {
	h := Hosts{Allow: []string{"relay.team.example"}}
	for host, want := range map[string]bool{
		"evil.example": false, "evil.example:80": false, "": false, "localhost.evil.example": false,
		"localhost": true, "LOCALHOST:1": true, "app.localhost:3": true, "127.0.0.1:9": true, "[::1]:9": true,
		"10.1.2.3": true, "relay.team.example.:443": true,
	} {
		if got := h.Allowed(host); got != want {
			t.Errorf("Allowed(%q) = %v", host, got)
		}
	}
	r := httptest.NewRequest(http.MethodGet, "http://localhost/", nil)
	for origin, want := range map[string]error{"": nil, "http://localhost:5173": nil, "https://127.0.0.1": nil,
		"http://evil.example": ErrForeignOrigin, "null": ErrForeignOrigin, "file://x": ErrForeignOrigin} {
		r.Header.Set("Origin", origin)
		if origin == "" {
			r.Header.Del("Origin")
		}
		if got := h.Check(r); got != want {
			t.Errorf("Origin %q: %v", origin, got)
		}
	}
}

// TestBearer: 401 without a token, 403 with another, 0 with it (header,
// or the query parameter where one is allowed).
func TestBearer(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "http://localhost/s?access_token=tok", nil)
	if Bearer(r, "", "") != 0 || Bearer(r, "tok", "") != http.StatusUnauthorized || Bearer(r, "tok", "access_token") != 0 {
		t.Error("query token")
	}
	r.Header.Set("Authorization", "Basic tok")
	if Bearer(r, "tok", "access_token") != http.StatusUnauthorized {
		t.Error("another scheme")
	}
	r.Header.Set("Authorization", "bearer other")
	if Bearer(r, "tok", "") != http.StatusForbidden {
		t.Error("wrong token")
	}
	r.Header.Set("Authorization", "Bearer tok")
	if Bearer(r, "tok", "") != 0 {
		t.Error("right token")
	}
}
