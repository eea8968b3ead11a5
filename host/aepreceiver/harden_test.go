package aepreceiver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func newServerOpts(t *testing.T, o Options) (*Server, *httptest.Server) {
	t.Helper()
	if o.Root == "" {
		o.Root = t.TempDir()
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() {
		hs.Close()
		s.Close()
	})
	return s, hs
}

func do(t *testing.T, req *http.Request) (int, string, http.Header) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func postReq(url string, body []byte, token string) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, url+"/events", bytes.NewReader(body))
	req.Header.Set("AEP-Version", "0.1")
	req.Header.Set("Content-Type", "application/x-ndjson")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req
}

// TestAEP0003_BearerToken: with a token, a request without one is 401
// (with WWW-Authenticate), another token is 403, the token is 202; SSE
// takes it as ?access_token= too; /healthz is open and says only
// {"ok":true} without the token, the counts with it.
func TestAEP0003_BearerToken(t *testing.T) {
	_, hs := newServerOpts(t, Options{Token: "s3cret-token"})
	line := ev("s1", 0, "x.test.run.step", "info")
	if code, _, h := do(t, postReq(hs.URL, line, "")); code != http.StatusUnauthorized || !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("no token: %d %v", code, h)
	}
	if code, _, _ := do(t, postReq(hs.URL, line, "other")); code != http.StatusForbidden {
		t.Errorf("wrong token: %d", code)
	}
	if code, body, _ := do(t, postReq(hs.URL, line, "s3cret-token")); code != http.StatusAccepted {
		t.Errorf("token: %d %s", code, body)
	}
	for _, path := range []string{"/stream", "/events", "/.well-known/aep", "/socket"} {
		req, _ := http.NewRequest(http.MethodGet, hs.URL+path, nil)
		if code, _, _ := do(t, req); code != http.StatusUnauthorized {
			t.Errorf("GET %s without a token: %d", path, code)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, hs.URL+"/stream?live=0&access_token=s3cret-token", nil)
	if code, _, _ := do(t, req); code != http.StatusOK {
		t.Errorf("access_token: %d", code)
	}
	req, _ = http.NewRequest(http.MethodGet, hs.URL+"/healthz", nil)
	if code, body, _ := do(t, req); code != http.StatusOK || strings.TrimSpace(body) != `{"ok":true}` {
		t.Errorf("healthz without a token: %d %s", code, body)
	}
	req.Header.Set("Authorization", "Bearer s3cret-token")
	if _, body, _ := do(t, req); !strings.Contains(body, `"accepted":1`) {
		t.Errorf("healthz with the token: %s", body)
	}
}

// TestHardening16_ForeignHostAndOriginRefused (issue 18 point 16): a Host
// or Origin naming a foreign DNS name (what a DNS rebinding page sends)
// is 403; loopback names, IP literals and --allow-host names pass.
func TestHardening16_ForeignHostAndOriginRefused(t *testing.T) {
	_, hs := newServerOpts(t, Options{AllowHosts: []string{"relay.team.example"}})
	for _, c := range []struct {
		host, origin string
		want         int
	}{
		{"evil.example", "", http.StatusForbidden},
		{"evil.example:8787", "", http.StatusForbidden},
		{"localhost:8787", "", http.StatusOK},
		{"127.0.0.1:8787", "", http.StatusOK},
		{"[::1]:8787", "", http.StatusOK},
		{"relay.team.example:8787", "", http.StatusOK},
		{"localhost:8787", "http://evil.example", http.StatusForbidden},
		{"localhost:8787", "null", http.StatusForbidden},
		{"localhost:8787", "http://localhost:3000", http.StatusOK},
	} {
		req, _ := http.NewRequest(http.MethodGet, hs.URL+"/events", nil)
		req.Host = c.host
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		if code, body, _ := do(t, req); code != c.want {
			t.Errorf("Host %s Origin %q: %d %s", c.host, c.origin, code, body)
		}
	}
}

// TestHardening14_FailedWriteIsNotSeen (issue 18 points 14 and 15): a
// write that fails for real (RLIMIT_FSIZE: the kernel writes what fits,
// a torn line, then refuses with EFBIG) answers 503 and leaves the event
// unseen; once there is room, the retry is stored on a line of its own
// (the torn tail cut first), not answered "duplicate".
func TestHardening14_FailedWriteIsNotSeen(t *testing.T) {
	root := t.TempDir()
	s, hs := newServerOpts(t, Options{Root: root})
	first, line := ev("s1", 0, "x.test.run.step", "info"), ev("s1", 1, "x.test.run.step", "info")
	mustPost(t, hs.URL, first)
	path := Path(root, "t", "s1")
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Skip(err)
	}
	limit := syscall.Rlimit{Cur: uint64(st.Size()) + 50, Max: old.Max}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
		t.Skip(err)
	}
	code, body, h := do(t, postReq(hs.URL, line, ""))
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if code != http.StatusServiceUnavailable || h.Get("Retry-After") == "" || !strings.Contains(body, "store-failed") {
		t.Fatalf("write over the size limit: %d %s", code, body)
	}
	if st2, _ := os.Stat(path); st2.Size() != st.Size()+50 {
		t.Fatalf("the fault left %d bytes, want a torn line of 50", st2.Size()-st.Size())
	}
	code, body, _ = do(t, postReq(hs.URL, line, ""))
	if code != http.StatusAccepted || !strings.Contains(body, `"accepted":1`) {
		t.Fatalf("retry once there is room: %d %s (the event was marked seen before it was stored)", code, body)
	}
	if b, _ := os.ReadFile(path); string(b) != string(first)+"\n"+string(line)+"\n" {
		t.Fatalf("stored %q", b)
	}
	if c := s.Counts(); c.StoreFailures != 1 || c.Accepted != 2 || c.Duplicates != 0 {
		t.Fatalf("counts %+v", c)
	}
}

// TestHardening15_TornTailRepairedOnOpen (issue 18 point 15): a session
// file ending in a torn line (a short write, a crash) is repaired when the
// relay opens its store: the tail is cut to a backup, and the next event
// is a line of its own.
func TestHardening15_TornTailRepairedOnOpen(t *testing.T) {
	root := t.TempDir()
	path := Path(root, "t", "s1")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	first, second := ev("s1", 0, "x.test.run.step", "info"), ev("s1", 1, "x.test.run.step", "info")
	if err := os.WriteFile(path, append(append(first, '\n'), second[:40]...), 0o600); err != nil {
		t.Fatal(err)
	}
	_, hs := newServerOpts(t, Options{Root: root})
	if code, body, _ := do(t, postReq(hs.URL, second, "")); code != http.StatusAccepted || !strings.Contains(body, `"accepted":1`) {
		t.Fatalf("post: %d %s", code, body)
	}
	b, _ := os.ReadFile(path)
	if want := string(first) + "\n" + string(second) + "\n"; string(b) != want {
		t.Fatalf("file after repair:\n%s", b)
	}
	backups, _ := filepath.Glob(path + ".torn-*")
	if len(backups) != 1 {
		t.Fatalf("backups %v", backups)
	}
	if torn, _ := os.ReadFile(backups[0]); string(torn) != string(second[:40]) {
		t.Fatalf("backup holds %q", torn)
	}
}

// TestHardening16_ParallelBodiesBounded (issue 18 point 16): 40 parallel
// 1 MiB posts are all stored, but no more than MaxBodies bodies are ever
// held at once (the memory bound).
func TestHardening16_ParallelBodiesBounded(t *testing.T) {
	s, hs := newServerOpts(t, Options{MaxBodies: 2, BodyTimeout: 5 * time.Minute})
	pad := bytes.Repeat([]byte(" "), 1<<20)
	var wg sync.WaitGroup
	errs := make(chan string, 40)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := append(append(append([]byte(nil), pad...), '\n'), ev(fmt.Sprint("p", i), 0, "x.test.run.step", "info")...)
			resp, err := http.DefaultClient.Do(postReq(hs.URL, body, ""))
			if err != nil {
				errs <- err.Error()
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusAccepted {
				errs <- resp.Status
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if c := s.Counts(); c.Accepted != 40 || c.PeakBodies > 2 || c.PeakBodies == 0 {
		t.Fatalf("counts %+v", c)
	}
}

// TestHardening16_SlowClientTimedOut (issue 18 point 16): a client that
// sends its headers and part of a body, then stalls, is cut off after the
// body timeout, and its turn to send a body is freed.
func TestHardening16_SlowClientTimedOut(t *testing.T) {
	_, hs := newServerOpts(t, Options{MaxBodies: 1, BodyTimeout: 200 * time.Millisecond})
	u, _ := url.Parse(hs.URL)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /events HTTP/1.1\r\nHost: %s\r\nAEP-Version: 0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"aep\"", u.Host)
	_ = conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("the stalled request was never answered: %v", err)
	}
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("stalled body: %s", resp.Status)
	}
	if code, body, _ := do(t, postReq(hs.URL, ev("s1", 0, "x.test.run.step", "info"), "")); code != http.StatusAccepted {
		t.Fatalf("after the stall: %d %s", code, body)
	}
}

// openUnder counts this process's file descriptors open on files under
// root.
func openUnder(t *testing.T, root string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	n := 0
	for _, e := range ents {
		if p, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && strings.HasPrefix(p, root) {
			n++
		}
	}
	return n
}

// TestHardening16_IdleFilesClosed (issue 18 point 16): with 40 sessions,
// no more than MaxOpenFiles session files are open at once, and files
// left idle are closed.
func TestHardening16_IdleFilesClosed(t *testing.T) {
	root := t.TempDir()
	s, hs := newServerOpts(t, Options{Root: root, MaxOpenFiles: 8, IdleClose: 100 * time.Millisecond})
	for i := range 40 {
		mustPost(t, hs.URL, ev(fmt.Sprint("f", i), 0, "x.test.run.step", "info"))
		if n := openUnder(t, root); n > 8 {
			t.Fatalf("%d session files open after %d sessions", n, i+1)
		}
	}
	for deadline := time.Now().Add(30 * time.Second); s.OpenFiles() > 0 || openUnder(t, root) > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d files still open", openUnder(t, root))
		}
	}
	mustPost(t, hs.URL, ev("f0", 1, "x.test.run.step", "info"))
	b, _ := os.ReadFile(Path(root, "t", "f0"))
	var n int
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if json.Valid(l) {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("reopened file holds %d events", n)
	}
}
