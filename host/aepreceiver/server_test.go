package aepreceiver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

func newServer(t *testing.T, root string) (*Server, *httptest.Server) {
	t.Helper()
	s, err := New(Options{Root: root})
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

func post(t *testing.T, url, version, ctype string, body []byte) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/events", bytes.NewReader(body))
	if version != "" {
		req.Header.Set("AEP-Version", version)
	}
	req.Header.Set("Content-Type", ctype)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func goldenLines(t *testing.T) [][]byte {
	t.Helper()
	b, err := os.ReadFile("testdata/golden/golden.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		out = append(out, append([]byte(nil), sc.Bytes()...))
	}
	return out
}

// TestAEP0003_RelayAcceptsEveryGoldenLine: each of the 64 golden events,
// one POST each (application/json), is accepted and stored; sent again as
// one NDJSON batch, every line is a duplicate (dedupe on (source, id)).
func TestAEP0003_RelayAcceptsEveryGoldenLine(t *testing.T) {
	root := t.TempDir()
	s, hs := newServer(t, root)
	lines := goldenLines(t)
	if len(lines) != 64 {
		t.Fatalf("golden has %d lines", len(lines))
	}
	for i, l := range lines {
		if code, body := post(t, hs.URL, "0.1", "application/json", l); code != http.StatusAccepted {
			t.Errorf("golden line %d: %d %v", i+1, code, body)
		}
	}
	code, body := post(t, hs.URL, "0.1", "application/x-ndjson", bytes.Join(lines, []byte("\n")))
	if code != http.StatusAccepted || body["duplicates"] != float64(64) {
		t.Errorf("batch again: %d %v", code, body)
	}
	if c := s.Counts(); c.Accepted != 64 || c.Duplicates != 64 || c.Rejected != 0 {
		t.Errorf("counts %+v", c)
	}
	b, err := os.ReadFile(Path(root, "claude-code", "s_8f2c"))
	if err != nil || bytes.Count(b, []byte("\n")) != 21 {
		t.Errorf("session file: %d lines, %v", bytes.Count(b, []byte("\n")), err)
	}
	if _, err := os.Stat(Path(root, "claude-code", "")); err != nil {
		t.Errorf("agent-scoped events: %v", err)
	}
}

// TestAEP0003_RelayRejectsEveryInvalidCase: every case of
// invalid/cases.json is refused (400): a single event on its own; a stream
// case once its offending event arrives, each case on a fresh relay.
func TestAEP0003_RelayRejectsEveryInvalidCase(t *testing.T) {
	var fx struct {
		Cases []struct {
			Name   string            `json:"name"`
			Rule   string            `json:"rule"`
			Event  json.RawMessage   `json:"event"`
			Events []json.RawMessage `json:"events"`
		} `json:"cases"`
	}
	b, err := os.ReadFile("testdata/invalid/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	if len(fx.Cases) != 35 {
		t.Fatalf("%d cases, want 35", len(fx.Cases))
	}
	for _, c := range fx.Cases {
		t.Run(c.Name, func(t *testing.T) {
			s, hs := newServer(t, t.TempDir())
			events := c.Events
			if c.Event != nil {
				events = []json.RawMessage{c.Event}
			}
			var last int
			for _, e := range events {
				last, _ = post(t, hs.URL, "0.1", "application/json", e)
				if last != http.StatusAccepted {
					break
				}
			}
			if last != http.StatusBadRequest || s.Counts().Rejected != 1 {
				t.Fatalf("accepted (status %d); the case breaks %s", last, c.Rule)
			}
		})
	}
}

// TestAEP0003_StatusCodes: 426 for another major version (with the
// versions body), 400 without the header, 413 for a body over the limit
// and for too many events, 415 for another content type; a batch with a
// bad line keeps its good lines and names the bad one.
func TestAEP0003_StatusCodes(t *testing.T) {
	s, err := New(Options{Root: t.TempDir(), MaxBody: 4096, MaxBatch: 3})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer hs.Close()
	ev := goldenLines(t)[25] // a minimal valid event
	if code, body := post(t, hs.URL, "1.0", "application/json", ev); code != http.StatusUpgradeRequired || body["versions"] == nil {
		t.Errorf("1.0: %d %v", code, body)
	}
	if code, _ := post(t, hs.URL, "", "application/json", ev); code != http.StatusBadRequest {
		t.Errorf("no version: %d", code)
	}
	if code, body := post(t, hs.URL, "0.1", "application/json", bytes.Repeat([]byte(" "), 5000)); code != http.StatusRequestEntityTooLarge || body["error"] != "payload-too-large" {
		t.Errorf("oversize: %d %v", code, body)
	}
	if code, body := post(t, hs.URL, "0.1", "application/x-ndjson", bytes.Repeat(append(ev, '\n'), 4)); code != http.StatusRequestEntityTooLarge || body["error"] != "too-many-events" {
		t.Errorf("too many: %d %v", code, body)
	}
	if code, _ := post(t, hs.URL, "0.1", "text/plain", ev); code != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain: %d", code)
	}
	bad := []byte(`{"aep":"0.1","id":"B","type":"tool","time":"2026-07-03T10:00:00Z","source":"aep://h/agent/a","agent":"a","session":"s","seq":9}`)
	code, body := post(t, hs.URL, "0.1", "application/x-ndjson", bytes.Join([][]byte{bad, ev}, []byte("\n")))
	if code != http.StatusBadRequest || body["accepted"] != float64(1) || !strings.HasPrefix(body["detail"].(string), "line 1:") {
		t.Errorf("mixed batch: %d %v", code, body)
	}
}

// TestRelayRestartKeepsDedupeAndOrder: a new relay over the same store
// replays it: a retried event is a duplicate, a regressed seq is refused.
func TestRelayRestartKeepsDedupeAndOrder(t *testing.T) {
	root := t.TempDir()
	_, hs := newServer(t, root)
	lines := goldenLines(t)[:3]
	for _, l := range lines {
		post(t, hs.URL, "0.1", "application/json", l)
	}
	hs.Close()
	_, hs2 := newServer(t, root)
	if code, body := post(t, hs2.URL, "0.1", "application/json", lines[2]); code != http.StatusAccepted || body["duplicates"] != float64(1) {
		t.Errorf("retry after restart: %d %v", code, body)
	}
	regressed := bytes.Replace(lines[1], []byte(`"id":"01JX9YB1BBBB0000000000GOLD"`), []byte(`"id":"OTHER"`), 1)
	if code, _ := post(t, hs2.URL, "0.1", "application/json", regressed); code != http.StatusBadRequest {
		t.Errorf("seq regression after restart: %d", code)
	}
}

// TestHealthzAndDiscovery: GET /healthz is {"ok":true}; discovery names
// the version and the events endpoint.
func TestHealthzAndDiscovery(t *testing.T) {
	_, hs := newServer(t, t.TempDir())
	for path, want := range map[string]string{"/healthz": `{"ok":true}`, "/.well-known/aep": `"aep":["0.1"]`, "/events": `"events":"/events"`} {
		resp, err := http.Get(hs.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(b.String(), want) {
			t.Errorf("%s: %d %s", path, resp.StatusCode, b.String())
		}
	}
}
