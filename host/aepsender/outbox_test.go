package aepsender

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func event(i int, sev string) []byte {
	return []byte(fmt.Sprintf(`{"aep":"0.1","id":"E%d","type":"x.t.e.v","severity":%q}`, i, sev))
}

// relay is a fake relay recording every POST.
type relay struct {
	mu     sync.Mutex
	posts  []string
	heads  []http.Header
	answer func(body string) int
}

func (r *relay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.posts = append(r.posts, string(b))
	r.heads = append(r.heads, req.Header.Clone())
	answer := r.answer
	r.mu.Unlock()
	code := http.StatusAccepted
	if answer != nil {
		code = answer(string(b))
	}
	w.WriteHeader(code)
}

func (r *relay) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, p := range r.posts {
		sc := bufio.NewScanner(strings.NewReader(p))
		for sc.Scan() {
			out = append(out, sc.Text())
		}
	}
	return out
}

func newOutbox(t *testing.T, base string, capacity int) *Outbox {
	t.Helper()
	o, err := New(Options{Base: base, Capacity: capacity, MinBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func shutdown(t *testing.T, o *Outbox, d time.Duration) Stats {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	s, err := o.Shutdown(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAEP0003_PostsNDJSONBatchesWithTheVersionHeader: POST {base}/events,
// AEP-Version 0.1, application/x-ndjson, events in order.
func TestAEP0003_PostsNDJSONBatchesWithTheVersionHeader(t *testing.T) {
	r := &relay{}
	srv := httptest.NewServer(r)
	defer srv.Close()
	o := newOutbox(t, srv.URL+"/", 100)
	o.Start(context.Background())
	for i := range 5 {
		o.Event("s", event(i, "info"))
	}
	if s := shutdown(t, o, 10*time.Second); s.Delivered != 5 || s.Lost() != 0 {
		t.Fatalf("stats %+v", s)
	}
	lines := r.lines()
	if len(lines) != 5 || lines[0] != string(event(0, "info")) || lines[4] != string(event(4, "info")) {
		t.Fatalf("lines %q", lines)
	}
	h := r.heads[0]
	if h.Get("AEP-Version") != "0.1" || h.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("headers %v", h)
	}
}

// TestAEP0003_RetriesWithTheSameIDs: a 5xx answer is retried with the same
// events, and each is delivered once it is accepted.
func TestAEP0003_RetriesWithTheSameIDs(t *testing.T) {
	fails := 2
	r := &relay{}
	r.answer = func(string) int {
		if fails > 0 {
			fails--
			return http.StatusServiceUnavailable
		}
		return http.StatusAccepted
	}
	srv := httptest.NewServer(r)
	defer srv.Close()
	o := newOutbox(t, srv.URL, 100)
	for i := range 3 {
		o.Event("s", event(i, "notice"))
	}
	o.Start(context.Background())
	s := shutdown(t, o, 10*time.Second)
	if s.Delivered != 3 || s.Retries != 2 || s.Lost() != 0 {
		t.Fatalf("stats %+v", s)
	}
	if len(r.posts) != 3 || r.posts[0] != r.posts[2] {
		t.Fatalf("attempts %q", r.posts)
	}
}

// TestAEP0003_RefusedLineIsIsolatedAndCounted: a 4xx batch is resent line
// by line; the refused event is counted, the others delivered.
func TestAEP0003_RefusedLineIsIsolatedAndCounted(t *testing.T) {
	r := &relay{answer: func(b string) int {
		if strings.Contains(b, `"E1"`) {
			return http.StatusBadRequest
		}
		return http.StatusAccepted
	}}
	srv := httptest.NewServer(r)
	defer srv.Close()
	o := newOutbox(t, srv.URL, 100)
	for i := range 3 {
		o.Event("s", event(i, "info"))
	}
	o.Start(context.Background())
	if s := shutdown(t, o, 10*time.Second); s.Delivered != 2 || s.Rejected != 1 {
		t.Fatalf("stats %+v", s)
	}
}

// TestOutboxFullDropsDebugAndInfoFirst: the bound holds; debug and info
// events make room first, then the oldest; every drop is counted.
func TestOutboxFullDropsDebugAndInfoFirst(t *testing.T) {
	o := newOutbox(t, "http://127.0.0.1:1", 3) // never started: the queue alone
	o.Event("s", event(0, "debug"))
	o.Event("s", event(1, "notice"))
	o.Event("s", event(2, "info"))
	o.Event("s", event(3, "error"))   // evicts 0 (debug)
	o.Event("s", event(4, "warning")) // evicts 2 (info)
	o.Event("s", event(5, "debug"))   // nothing of its rank to evict: dropped
	o.Event("s", event(6, "notice"))  // evicts the oldest, 1
	var ids []string
	for _, it := range o.queue {
		ids = append(ids, string(it.line[strings.Index(string(it.line), `"E`)+1:][:2]))
	}
	if got := strings.Join(ids, ","); got != "E3,E4,E6" {
		t.Fatalf("queue %s", got)
	}
	s := o.Stats()
	if s.Dropped["debug"] != 2 || s.Dropped["info"] != 1 || s.Dropped["notice"] != 1 || s.Lost() != 4 {
		t.Fatalf("dropped %v", s.Dropped)
	}
}

// TestRelayDownOrSlowNeverBlocks: with a relay that hangs, adding events
// returns at once, and Shutdown gives up at its deadline counting what was
// left as unsent.
func TestRelayDownOrSlowNeverBlocks(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
	}))
	defer srv.Close()
	defer close(release)
	o := newOutbox(t, srv.URL, 50)
	o.Start(context.Background())
	added := make(chan struct{})
	go func() {
		for i := range 1000 {
			o.Event("s", event(i, "info"))
		}
		close(added)
	}()
	select {
	case <-added:
	case <-time.After(30 * time.Second):
		t.Fatal("Event blocked on a hanging relay")
	}
	s := shutdown(t, o, 50*time.Millisecond)
	if s.Delivered != 0 || s.Lost() != 1000 || s.Unsent == 0 {
		t.Fatalf("stats %+v", s)
	}
}

// TestDeliveredWhenTheRelayComesBack: a relay that refuses connections is
// retried; once it listens again the queued events arrive.
func TestDeliveredWhenTheRelayComesBack(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	o := newOutbox(t, "http://"+addr, 100)
	o.Start(context.Background())
	for i := range 10 {
		o.Event("s", event(i, "info"))
	}
	time.Sleep(30 * time.Millisecond) // a few refused attempts
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("port taken meanwhile: %v", err)
	}
	r := &relay{}
	srv := &http.Server{Handler: r}
	go srv.Serve(ln)
	defer srv.Close()
	if s := shutdown(t, o, 20*time.Second); s.Delivered != 10 || s.Retries == 0 {
		t.Fatalf("stats %+v", s)
	}
	if got := len(r.lines()); got != 10 {
		t.Fatalf("relay got %d lines", got)
	}
}

// TestAEP0003_SendsTheBearerToken: the token goes out as Authorization:
// Bearer; a 401/403 rejects the batch whole (no line-by-line resend: the
// token is wrong for every line), each event counted as rejected.
func TestAEP0003_SendsTheBearerToken(t *testing.T) {
	r := &relay{}
	r.answer = func(string) int {
		if h := r.heads[len(r.heads)-1].Get("Authorization"); h != "Bearer t0k" {
			return http.StatusForbidden
		}
		return http.StatusAccepted
	}
	srv := httptest.NewServer(r)
	defer srv.Close()
	o, err := New(Options{Base: srv.URL, Token: "t0k"})
	if err != nil {
		t.Fatal(err)
	}
	o.Event("s", event(0, "info"))
	o.Start(context.Background())
	if s := shutdown(t, o, 10*time.Second); s.Delivered != 1 {
		t.Fatalf("with the token: %+v", s)
	}
	r2 := &relay{answer: func(string) int { return http.StatusUnauthorized }}
	srv2 := httptest.NewServer(r2)
	defer srv2.Close()
	o2 := newOutbox(t, srv2.URL, 100)
	for i := range 3 {
		o2.Event("s", event(i, "notice"))
	}
	o2.Start(context.Background())
	if s := shutdown(t, o2, 10*time.Second); s.Rejected != 3 || s.Delivered != 0 || len(r2.posts) != 1 {
		t.Fatalf("without: %+v after %d posts", s, len(r2.posts))
	}
}
