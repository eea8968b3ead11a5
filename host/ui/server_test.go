package ui

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acptap/acptap/host/store"
)

const demoStream = "../../sdk/asr/testdata/demo.asr.jsonl"

// newStore copies the demo stream into a store as session id.
func newStore(t testing.TB, ids ...string) *store.Store {
	t.Helper()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(demoStream)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		os.MkdirAll(st.SessionDir(id), 0o700)
		if err := os.WriteFile(st.StreamPath(id), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func serve(t *testing.T, st *store.Store) (*httptest.Server, *Server) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := New(ln.Addr(), Options{Store: st})
	ts := httptest.NewUnstartedServer(srv)
	ts.Listener.Close()
	ts.Listener = ln
	ts.Start()
	t.Cleanup(ts.Close)
	return ts, srv
}

func get(t *testing.T, url string, hdr map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestSecurity(t *testing.T) {
	st := newStore(t, "s1")
	ts, srv := serve(t, st)
	tok := "token=" + srv.Token()
	cases := []struct {
		name string
		path string
		hdr  map[string]string
		want int
	}{
		{"right token", "/api/sessions?" + tok, nil, 200},
		{"no token", "/api/sessions", nil, 403},
		{"wrong token", "/api/sessions?token=0123", nil, 403},
		{"wrong cookie", "/api/sessions", map[string]string{"Cookie": CookieName + "=nope"}, 403},
		{"right cookie", "/api/sessions", map[string]string{"Cookie": CookieName + "=" + srv.Token()}, 200},
		{"foreign host (DNS rebinding)", "/api/sessions?" + tok, map[string]string{"Host": "evil.example:80"}, 403},
		{"foreign origin", "/api/sessions?" + tok, map[string]string{"Origin": "http://evil.example"}, 403},
		{"same origin", "/api/sessions?" + tok, map[string]string{"Origin": ts.URL}, 200},
		{"session escaping the store", "/api/session?id=../../../etc/passwd&" + tok, nil, 404},
		{"stream alt escaping", "/api/session?id=s1&alt=../../wire/x&" + tok, nil, 404},
		{"wire escaping", "/api/wire?id=s1&wire=../../logs/acptap.log&" + tok, nil, 404},
		{"export escaping", "/export?id=..%2F..%2Fx&" + tok, nil, 404},
		{"static escaping", "/static/../server.go?" + tok, nil, 404},
		{"unknown session", "/api/session?id=nope&" + tok, nil, 404},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got, body := get(t, ts.URL+c.path, c.hdr); got != c.want {
				t.Errorf("GET %s: %d, want %d (%s)", c.path, got, c.want, strings.TrimSpace(body))
			}
		})
	}
	req, _ := http.NewRequest("POST", ts.URL+"/api/sessions?"+tok, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d, want 405 (read-only)", resp.StatusCode)
	}
}

func TestExportLevels(t *testing.T) {
	st := newStore(t, "s1")
	ts, srv := serve(t, st)
	prompt := "Fix the typo in the greeting printed by main.go."
	for level, want := range map[string]bool{"full": true, "redacted": true, "metadata": false, "none": false} {
		for _, format := range []string{"html", "markdown"} {
			code, body := get(t, fmt.Sprintf("%s/export?id=s1&format=%s&capture=%s&token=%s", ts.URL, format, level, srv.Token()), nil)
			if code != 200 {
				t.Fatalf("%s %s: %d %s", level, format, code, body)
			}
			if got := strings.Contains(body, prompt); got != want {
				t.Errorf("%s %s export holds the prompt: %v, want %v", level, format, got, want)
			}
			if format == "html" && strings.Contains(body, "<script") {
				t.Errorf("%s export has a script", level)
			}
		}
	}
}

func TestCompare(t *testing.T) {
	st := newStore(t, "a", "b")
	// b's copy differs in one record's text and has one record more.
	b, _ := os.ReadFile(st.StreamPath("b"))
	lines := strings.SplitAfter(string(b), "\n")
	lines[2] = strings.Replace(lines[2], "Fix the typo", "Fix the bug", 1)
	os.WriteFile(st.StreamPath("b"), []byte(strings.Join(lines, "")), 0o600)
	os.WriteFile(filepath.Join(st.SessionDir("b"), "stream.asr.jsonl.prev-1"), b, 0o600)
	c, err := compareFiles(st.StreamPath("a"), st.StreamPath("b"), false)
	if err != nil {
		t.Fatal(err)
	}
	if c.Counts[Differs] != 1 || len(c.Rows) != 1 || c.Rows[0].N != 2 {
		t.Errorf("compare: %+v", c.Counts)
	}
	ts, srv := serve(t, st)
	code, body := get(t, ts.URL+"/api/compare?a=b&b=b&balt=stream.asr.jsonl.prev-1&token="+srv.Token(), nil)
	if code != 200 || !strings.Contains(body, `"differs":1`) {
		t.Errorf("compare with the previous rebuild: %d %s", code, body)
	}
}

func TestSessionsSearchAndFilters(t *testing.T) {
	st := newStore(t, "a", "b")
	b, _ := os.ReadFile(st.StreamPath("b"))
	os.WriteFile(st.StreamPath("b"), []byte(strings.ReplaceAll(string(b), "Thanks!", "Merci! \\\"quoted\\\"")), 0o600)
	srv := New(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}, Options{Store: st})
	for q, want := range map[string]int{"": 2, "merci": 1, `"quoted"`: 1, "thanks": 1, "no such words": 0} {
		l, err := srv.listSessions(q, "", "", "", "", false, 0, 50)
		if err != nil {
			t.Fatal(err)
		}
		if l.Total != want {
			t.Errorf("search %q: %d sessions, want %d", q, l.Total, want)
		}
	}
	if l, _ := srv.listSessions("", "no such agent", "", "", "", false, 0, 50); l.Total != 0 {
		t.Errorf("agent filter kept %d", l.Total)
	}
	if l, _ := srv.listSessions("", "", "", "", "", true, 0, 50); l.Total != 0 {
		t.Errorf("has-errors filter kept %d sessions without errors", l.Total)
	}
	if _, err := srv.listSessions("", "", "", "yesterday", "", false, 0, 50); err == nil {
		t.Error("a bad date was accepted")
	}
}

// TestCentralStore: a store written by acptap collect (a directory per
// origin) lists every origin's sessions, and each opens.
func TestCentralStore(t *testing.T) {
	root := t.TempDir()
	for _, o := range []string{"alice@laptop", "bob@desk"} {
		st, err := store.Open(filepath.Join(root, o))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(demoStream)
		os.MkdirAll(st.SessionDir("s1"), 0o700)
		os.WriteFile(st.StreamPath("s1"), b, 0o600)
	}
	os.MkdirAll(filepath.Join(root, ".collect"), 0o700)
	central, _ := store.Open(root)
	ts, srv := serve(t, central)
	l, err := srv.listSessions("", "", "", "", "", false, 0, 50)
	if err != nil || l.Total != 2 {
		t.Fatalf("central store: %v, %+v", err, l)
	}
	for _, s := range l.Sessions {
		if s.Key != s.Origin+"/s1" {
			t.Errorf("key %q of origin %q", s.Key, s.Origin)
		}
		if code, body := get(t, ts.URL+"/api/session?id="+s.Key+"&token="+srv.Token(), nil); code != 200 {
			t.Errorf("open %s: %d %s", s.Key, code, body)
		}
	}
	if code, _ := get(t, ts.URL+"/api/session?id=carol/s1&token="+srv.Token(), nil); code != 404 {
		t.Errorf("an unknown origin: %d", code)
	}
}
