package aepreceiver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// ev builds a valid vendor-typed event of session s at (0, seq).
func ev(session string, seq int, typ, sev string) []byte {
	return []byte(fmt.Sprintf(`{"aep":"0.1","id":"E-%s-%d","type":%q,"time":"2026-07-03T10:00:00Z","source":"aep://h/agent/t/session/%s","agent":"t","session":%q,"seq":%d,"severity":%q,"capture":"metadata","data":{"n":%d}}`,
		session, seq, typ, session, session, seq, sev, seq))
}

// typeOf is the i-th event's type in the tests' mix: every third a tool
// event at notice, the rest run events at info.
func typeOf(i int) (string, string) {
	if i%3 == 0 {
		return "x.test.tool.ran", "notice"
	}
	return "x.test.run.step", "info"
}

func mustPost(t *testing.T, url string, lines ...[]byte) {
	t.Helper()
	code, body := post(t, url, "0.1", "application/x-ndjson", bytes.Join(lines, []byte("\n")))
	if code != http.StatusAccepted {
		t.Fatalf("post: %d %v", code, body)
	}
}

// sseMsg is one parsed SSE message (or comment).
type sseMsg struct {
	event, id, data, comment string
}

// sseClient reads an SSE response.
type sseClient struct {
	resp *http.Response
	r    *bufio.Reader
}

func openSSE(t *testing.T, rawURL string, header http.Header) *sseClient {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, rawURL, nil)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("GET %s: %d %s", rawURL, resp.StatusCode, b)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return &sseClient{resp: resp, r: bufio.NewReader(resp.Body)}
}

// next reads one message or comment.
func (c *sseClient) next(t *testing.T) sseMsg {
	t.Helper()
	var m sseMsg
	for {
		line, err := c.r.ReadString('\n')
		if err != nil {
			t.Fatalf("stream ended: %v (partial %+v)", err, m)
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if m != (sseMsg{}) {
				return m
			}
		case strings.HasPrefix(line, ": "):
			m.comment = line[2:]
		case strings.HasPrefix(line, "event: "):
			m.event = line[7:]
		case strings.HasPrefix(line, "id: "):
			m.id = line[4:]
		case strings.HasPrefix(line, "data: "):
			m.data = line[6:]
		}
	}
}

// nextEvent skips comments.
func (c *sseClient) nextEvent(t *testing.T) sseMsg {
	t.Helper()
	for {
		if m := c.next(t); m.comment == "" {
			return m
		}
	}
}

func streamURL(base string, q url.Values) string { return base + "/stream?" + q.Encode() }

// TestAEP0003_SSEFilterResumeNoGapNoDuplicate: a filtered SSE consumer
// sees exactly the matching events, live, in order, with id
// {session}:{epoch}:{seq}; it disconnects, more events are posted, and
// with Last-Event-ID it gets the rest from the stored log: no duplicate,
// no gap.
func TestAEP0003_SSEFilterResumeNoGapNoDuplicate(t *testing.T) {
	_, hs := newServer(t, t.TempDir())
	q := url.Values{"filter": {`{"type":["x.test.tool.*"],"session":"s1"}`}}
	c := openSSE(t, streamURL(hs.URL, q), nil)
	var want []string
	for i := range 30 {
		typ, sev := typeOf(i)
		mustPost(t, hs.URL, ev("s1", i, typ, sev), ev("s2", i, typ, sev))
		if typ == "x.test.tool.ran" {
			want = append(want, fmt.Sprintf("s1:0:%d", i))
		}
	}
	var last string
	for _, w := range want[:4] {
		m := c.nextEvent(t)
		if m.id != w || m.event != "x.test.tool.ran" || !strings.Contains(m.data, `"session":"s1"`) {
			t.Fatalf("got %+v, want id %s", m, w)
		}
		last = m.id
	}
	c.resp.Body.Close() // disconnect mid-stream
	for i := 30; i < 45; i++ {
		typ, sev := typeOf(i)
		mustPost(t, hs.URL, ev("s1", i, typ, sev))
		if typ == "x.test.tool.ran" {
			want = append(want, fmt.Sprintf("s1:0:%d", i))
		}
	}
	c = openSSE(t, streamURL(hs.URL, q), http.Header{"Last-Event-Id": {last}})
	for _, w := range want[4:] {
		if m := c.nextEvent(t); m.id != w {
			t.Fatalf("after resume got %q, want %q (a gap or a duplicate)", m.id, w)
		}
	}
	mustPost(t, hs.URL, ev("s1", 45, "x.test.tool.ran", "notice"))
	if m := c.nextEvent(t); m.id != "s1:0:45" {
		t.Fatalf("live after replay: %+v", m)
	}
}

// TestAEP0003_ReplayBoundedAndExhausted: with a buffer of 5, a position
// before the buffer gets ": replay-exhausted s1 0:5" and then what is
// held; from=all replays every held session without the marker; live=0
// ends after the replay.
func TestAEP0003_ReplayBoundedAndExhausted(t *testing.T) {
	s, err := New(Options{Root: t.TempDir(), Buffer: 5})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer hs.Close()
	defer s.Close()
	for i := range 10 {
		mustPost(t, hs.URL, ev("s1", i, "x.test.run.step", "info"))
	}
	mustPost(t, hs.URL, ev("s2", 0, "x.test.run.step", "info"))
	c := openSSE(t, streamURL(hs.URL, url.Values{"from": {`[{"session":"s1","epoch":0,"seq":1}]`}, "live": {"0"}}), nil)
	if m := c.next(t); m.comment != "replay-exhausted s1 0:5" {
		t.Fatalf("first: %+v", m)
	}
	for i := 5; i < 10; i++ {
		if m := c.next(t); m.id != fmt.Sprintf("s1:0:%d", i) {
			t.Fatalf("replay: %+v", m)
		}
	}
	if _, err := c.r.ReadString('\n'); err != io.EOF {
		t.Fatalf("live=0 did not end the stream: %v", err)
	}
	c = openSSE(t, streamURL(hs.URL, url.Values{"from": {"all"}, "live": {"0"}}), nil)
	got := map[string]int{}
	for {
		line, err := c.r.ReadString('\n')
		if err != nil {
			break
		}
		if strings.HasPrefix(line, ": replay-exhausted") {
			t.Fatalf("replay-all must not announce exhaustion: %q", line)
		}
		if id, ok := strings.CutPrefix(line, "id: "); ok {
			got[strings.SplitN(id, ":", 2)[0]]++
		}
	}
	if got["s1"] != 5 || got["s2"] != 1 {
		t.Fatalf("replay all: %v", got)
	}
	// Restarted, the relay rebuilds the buffer from its files.
	hs.Close()
	s.Close()
	s2, err := New(Options{Root: s.opts.Root, Buffer: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	hs2 := httptest.NewServer(s2)
	defer hs2.Close()
	c = openSSE(t, streamURL(hs2.URL, url.Values{"live": {"0"}}), http.Header{"Last-Event-Id": {"s1:0:7"}})
	if a, b := c.nextEvent(t), c.nextEvent(t); a.id != "s1:0:8" || b.id != "s1:0:9" {
		t.Fatalf("after restart: %+v %+v", a, b)
	}
}

// TestAEP0003_SSEPing: a ": ping" comment arrives on an idle stream (the
// interval is an option, so the test need not wait 30 s).
func TestAEP0003_SSEPing(t *testing.T) {
	s, err := New(Options{Root: t.TempDir(), Ping: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer hs.Close()
	defer s.Close()
	c := openSSE(t, hs.URL+"/stream", nil)
	if m := c.next(t); m.comment != "ping" {
		t.Fatalf("got %+v", m)
	}
}

// TestAEP0003_CaptureCeilingDownlevels: capture=metadata delivers a
// redacted attention request at metadata (prompt synthesized, labels
// become ids); capture=full never raises it: the stored bytes pass.
func TestAEP0003_CaptureCeilingDownlevels(t *testing.T) {
	_, hs := newServer(t, t.TempDir())
	line := goldenLines(t)[4]
	mustPost(t, hs.URL, goldenLines(t)[:5]...)
	from := url.Values{"from": {`[{"session":"s_8f2c","epoch":0,"seq":3}]`}, "live": {"0"}}
	from.Set("capture", "metadata")
	m := openSSE(t, streamURL(hs.URL, from), nil).nextEvent(t)
	var got struct {
		Capture string `json:"capture"`
		Data    struct {
			Prompt  string `json:"prompt"`
			Options []struct{ ID, Label string }
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(m.data), &got); err != nil {
		t.Fatal(err)
	}
	if got.Capture != "metadata" || got.Data.Prompt != "claude-code requests permission: Bash" ||
		got.Data.Options[0].Label != "allow" || strings.Contains(m.data, "rm -rf") {
		t.Fatalf("capture=metadata delivered %s", m.data)
	}
	from.Set("capture", "full")
	if m := openSSE(t, streamURL(hs.URL, from), nil).nextEvent(t); m.data != string(line) {
		t.Fatalf("capture=full changed the event:\n%s\n%s", m.data, line)
	}
}

// TestAEP0003_SubscriptionRefusals: a filter with an illegal key, a bad
// capture or a malformed from is a 400 invalid-filter before any stream
// starts; too many positions is limit-exceeded.
func TestAEP0003_SubscriptionRefusals(t *testing.T) {
	s, err := New(Options{Root: t.TempDir(), MaxFrom: 1})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer hs.Close()
	defer s.Close()
	for q, want := range map[string]string{
		url.Values{"filter": {`{"seq":5}`}}.Encode():                                                           "invalid-filter",
		url.Values{"capture": {"most"}}.Encode():                                                               "invalid-filter",
		url.Values{"from": {`{"session":"s"}`}}.Encode():                                                       "invalid-filter",
		url.Values{"from": {`[{"session":"a","epoch":0,"seq":1},{"session":"b","epoch":0,"seq":1}]`}}.Encode(): "limit-exceeded",
	} {
		resp, err := http.Get(hs.URL + "/stream?" + q)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || body["error"] != want {
			t.Errorf("%s: %d %v", q, resp.StatusCode, body)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, hs.URL+"/stream", nil)
	req.Header.Set("Last-Event-ID", "no-position")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("bad Last-Event-ID: %v %v", resp.StatusCode, err)
	}
}

// wsDial connects to /socket.
func wsDial(t *testing.T, base string, h http.Header) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/socket", &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return c
}

func wsSend(t *testing.T, c *websocket.Conn, v string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, []byte(v)); err != nil {
		t.Fatal(err)
	}
}

// wsRead reads a frame or event, skipping the relay's pings.
func wsRead(t *testing.T, c *websocket.Conn) map[string]any {
	t.Helper()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, b, err := c.Read(ctx)
		cancel()
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if m["type"] != "ping" {
			return m
		}
	}
}

// TestAEP0003_WebSocketHelloSubscribe: hello both ways (one version
// selected, the relay's capabilities), then a subscription with a filter
// and a resume position replays and goes live; a refused subscribe is
// answered in band and the connection survives; ping is answered pong;
// an emitter connection posts events.
func TestAEP0003_WebSocketHelloSubscribe(t *testing.T) {
	_, hs := newServer(t, t.TempDir())
	for i := range 6 {
		typ, sev := typeOf(i)
		mustPost(t, hs.URL, ev("s1", i, typ, sev))
	}
	c := wsDial(t, hs.URL, nil)
	wsSend(t, c, `{"type":"hello","versions":["0.2","0.1"],"role":"consumer","identity":{"agent":"test"},"capabilities":{"unknown":1}}`)
	h := wsRead(t, c)
	if h["type"] != "hello" || fmt.Sprint(h["versions"]) != "[0.1]" || h["capabilities"].(map[string]any)["filters"] == nil {
		t.Fatalf("hello: %v", h)
	}
	wsSend(t, c, `{"type":"subscribe","id":"bad","filter":{"time":"x"}}`)
	if m := wsRead(t, c); m["type"] != "error" || m["code"] != "invalid-filter" || m["id"] != "bad" {
		t.Fatalf("refusal: %v", m)
	}
	wsSend(t, c, `{"type":"subscribe","id":"sub-1","filter":{"type":"x.test.tool.*"},"from":[{"session":"s1","epoch":0,"seq":0}]}`)
	if m := wsRead(t, c); m["type"] != "subscribed" || m["id"] != "sub-1" {
		t.Fatalf("subscribed: %v", m)
	}
	if m := wsRead(t, c); m["id"] != "E-s1-3" {
		t.Fatalf("replayed: %v", m)
	}
	wsSend(t, c, `{"type":"ping","t":7}`)
	if m := wsRead(t, c); m["type"] != "pong" || m["t"] != float64(7) {
		t.Fatalf("pong: %v", m)
	}
	e := wsDial(t, hs.URL, nil)
	wsSend(t, e, `{"type":"hello","versions":["0.1"],"role":"emitter","identity":{"agent":"t"}}`)
	wsRead(t, e)
	wsSend(t, e, string(ev("s1", 6, "x.test.tool.ran", "notice")))
	if m := wsRead(t, c); m["id"] != "E-s1-6" {
		t.Fatalf("live from the emitter socket: %v", m)
	}
	wsSend(t, c, `{"type":"unsubscribe","id":"sub-1"}`)
	if m := wsRead(t, c); m["type"] != "unsubscribed" {
		t.Fatalf("unsubscribe: %v", m)
	}
}

// TestAEP0003_WebSocketHelloFirst: a first frame other than hello gets
// hello-required and a close; no common version gets
// version-unsupported; a binary frame after hello closes with 1003.
func TestAEP0003_WebSocketHelloFirst(t *testing.T) {
	_, hs := newServer(t, t.TempDir())
	for frame, code := range map[string]string{
		`{"type":"subscribe","id":"x"}`:     "hello-required",
		`{"type":"hello","versions":["9"]}`: "version-unsupported",
	} {
		c := wsDial(t, hs.URL, nil)
		wsSend(t, c, frame)
		if m := wsRead(t, c); m["type"] != "error" || m["code"] != code {
			t.Errorf("%s: %v", frame, m)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, _, err := c.Read(ctx)
		cancel()
		if websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
			t.Errorf("%s: not closed: %v", frame, err)
		}
	}
	c := wsDial(t, hs.URL, nil)
	wsSend(t, c, `{"type":"hello","versions":["0.1"],"role":"consumer"}`)
	wsRead(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = c.Write(ctx, websocket.MessageBinary, []byte{1})
	if _, _, err := c.Read(ctx); websocket.CloseStatus(err) != websocket.StatusUnsupportedData {
		t.Errorf("binary frame: %v", err)
	}
}

// TestAEP0003_SlowConsumerDisconnectedNotSkipped: a consumer that stops
// reading while notice events keep coming is disconnected (AEP-0003
// §8.4: deliver or disconnect) with an overflow comment; what it got is a
// gap-free run of positions, so it resumes exactly.
func TestAEP0003_SlowConsumerDisconnectedNotSkipped(t *testing.T) {
	s, hs := newServerOpts(t, Options{Queue: 4, WriteTimeout: 5 * time.Minute})
	c := openSSE(t, hs.URL+"/stream", nil)
	pad := strings.Repeat("x", 64<<10)
	n := 0
	for ; s.hub.Len() > 0; n++ {
		if n == 5000 {
			t.Fatal("the stalled consumer was never disconnected")
		}
		line := fmt.Sprintf(`{"aep":"0.1","id":"B%d","type":"x.test.tool.ran","time":"2026-07-03T10:00:00Z","source":"aep://h/agent/t","agent":"t","session":"s1","seq":%d,"severity":"notice","data":{"pad":%q}}`, n, n, pad)
		mustPost(t, hs.URL, []byte(line))
	}
	var last = -1
	for {
		m := c.next(t)
		if m.comment != "" {
			if strings.HasPrefix(m.comment, "overflow") {
				break
			}
			continue
		}
		var seq int
		fmt.Sscanf(m.id, "s1:0:%d", &seq)
		if seq != last+1 {
			t.Fatalf("after %d came %d: a notice event was skipped", last, seq)
		}
		last = seq
	}
	if last < 0 || last >= n-1 {
		t.Fatalf("received up to %d of %d before the overflow", last, n)
	}
	t.Logf("%d posted; the consumer got 0..%d, then the overflow comment", n, last)
}

// TestDrainEndsStreamsAndSockets: at shutdown an SSE consumer gets
// ": shutting-down" and the end of its response; a WebSocket consumer a
// closing frame with the positions it was delivered, then close 1001.
func TestDrainEndsStreamsAndSockets(t *testing.T) {
	s, hs := newServerOpts(t, Options{})
	c := openSSE(t, hs.URL+"/stream", nil)
	ws := wsDial(t, hs.URL, nil)
	wsSend(t, ws, `{"type":"hello","versions":["0.1"],"role":"consumer"}`)
	wsRead(t, ws)
	wsSend(t, ws, `{"type":"subscribe","id":"a"}`)
	wsRead(t, ws)
	mustPost(t, hs.URL, ev("s1", 4, "x.test.run.step", "info"))
	if m := c.nextEvent(t); m.id != "s1:0:4" {
		t.Fatalf("sse %+v", m)
	}
	if m := wsRead(t, ws); m["id"] != "E-s1-4" {
		t.Fatalf("ws %v", m)
	}
	s.Drain()
	if m := c.next(t); m.comment != "shutting-down" {
		t.Fatalf("sse at drain: %+v", m)
	}
	if _, err := c.r.ReadString('\n'); err != io.EOF {
		t.Fatalf("the SSE response did not end: %v", err)
	}
	m := wsRead(t, ws)
	if m["type"] != "closing" || fmt.Sprint(m["delivered"]) != "[map[epoch:0 seq:4 session:s1 sub:a]]" {
		t.Fatalf("ws at drain: %v", m)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, _, err := ws.Read(ctx); websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Fatalf("ws close: %v", err)
	}
}

// TestAEP0003_DiscoveryAdvertisesWhatIsServed: both discovery URLs give
// the same document: the three endpoints (each answering), attr-match,
// the replay buffer in use with replay-all, the capture ceilings taken,
// no control accepted and no roster (not implemented, so not declared).
func TestAEP0003_DiscoveryAdvertisesWhatIsServed(t *testing.T) {
	_, hs := newServerOpts(t, Options{Buffer: 123})
	var docs []string
	for _, p := range []string{"/events", "/.well-known/aep"} {
		req, _ := http.NewRequest(http.MethodGet, hs.URL+p, nil)
		code, body, h := do(t, req)
		if code != http.StatusOK || h.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %d %s", p, code, h.Get("Content-Type"))
		}
		docs = append(docs, body)
	}
	if docs[0] != docs[1] {
		t.Fatalf("two documents:\n%s\n%s", docs[0], docs[1])
	}
	var d struct {
		AEP          []string          `json:"aep"`
		Endpoints    map[string]string `json:"endpoints"`
		Capabilities map[string]json.RawMessage
	}
	if err := json.Unmarshal([]byte(docs[0]), &d); err != nil {
		t.Fatal(err)
	}
	c := d.Capabilities
	if fmt.Sprint(d.AEP) != "[0.1]" || d.Endpoints["stream"] != "/stream" || d.Endpoints["socket"] != "/socket" || d.Endpoints["events"] != "/events" ||
		string(c["filters"]) != `["attr-match"]` || string(c["replay"]) != `{"all":true,"buffer":123}` ||
		string(c["capture"]) != `["none","metadata","redacted","full"]` || string(c["control"]) != `{"accepts":[]}` || c["roster"] != nil {
		t.Fatalf("discovery %s", docs[0])
	}
	openSSE(t, hs.URL+d.Endpoints["stream"]+"?live=0", nil)
	ws := wsDial(t, hs.URL, nil)
	wsSend(t, ws, `{"type":"hello","versions":["0.1"]}`)
	if h := wsRead(t, ws); fmt.Sprint(h["capabilities"]) != fmt.Sprint(mapOf(t, c)) {
		t.Fatalf("hello capabilities %v differ from discovery %s", h["capabilities"], docs[0])
	}
}

func mapOf(t *testing.T, c map[string]json.RawMessage) map[string]any {
	t.Helper()
	b, _ := json.Marshal(c)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestReplayBeyondMaxSessions: only MaxSessions replay buffers stay in
// memory; a consumer resuming in a session dropped from memory is served
// from its file all the same, and replay-all covers what is held.
func TestReplayBeyondMaxSessions(t *testing.T) {
	s, hs := newServerOpts(t, Options{MaxSessions: 2})
	for _, sess := range []string{"a", "b", "c"} {
		for i := range 3 {
			mustPost(t, hs.URL, ev(sess, i, "x.test.run.step", "info"))
		}
	}
	s.mu.Lock()
	held := len(s.store.index)
	s.mu.Unlock()
	if held != 2 {
		t.Fatalf("%d sessions held", held)
	}
	c := openSSE(t, streamURL(hs.URL, url.Values{"live": {"0"}}), http.Header{"Last-Event-Id": {"a:0:0"}})
	if x, y := c.nextEvent(t), c.nextEvent(t); x.id != "a:0:1" || y.id != "a:0:2" {
		t.Fatalf("resume in a dropped session: %+v %+v", x, y)
	}
}
