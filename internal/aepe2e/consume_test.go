package aepe2e

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/acptap/acptap/internal/testpeers"
)

const consumerFilter = `{"type":["tool.*","attention.*"]}`

// wanted is the test's own reading of consumerFilter: tool and attention
// events, in the order of record's JSONL log.
func wanted(t *testing.T, path string) (ids, positions []string) {
	t.Helper()
	for _, l := range readLines(t, path) {
		var e event
		if err := json.Unmarshal(l, &e); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(e.Type, "tool.") || strings.HasPrefix(e.Type, "attention.") {
			ids = append(ids, e.ID)
			positions = append(positions, fmt.Sprintf("%s:%d:%d", e.Session, e.Epoch, e.Seq))
		}
	}
	return ids, positions
}

func authed(req *http.Request, token string) *http.Request {
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req
}

// sse is a plain HTTP SSE reader: messages as (id, event, data).
type sse struct {
	body io.ReadCloser
	r    *bufio.Reader
}

type sseMessage struct{ id, event, data string }

func openStream(t *testing.T, base, token, query, lastID string) *sse {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/stream?"+query, nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(authed(req, token))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET /stream: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	t.Cleanup(func() { resp.Body.Close() })
	return &sse{body: resp.Body, r: bufio.NewReader(resp.Body)}
}

// next returns the next message (comments skipped), or ok=false at the
// end of the stream.
func (s *sse) next(t *testing.T) (m sseMessage, ok bool) {
	t.Helper()
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			return m, false
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "" && m.data != "":
			return m, true
		case strings.HasPrefix(line, "id: "):
			m.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			m.event = line[7:]
		case strings.HasPrefix(line, "data: "):
			m.data = line[6:]
		}
	}
}

// TestRelayConsumers_SSEAndWebSocket: `acptap record` with the SDK peers
// posts, with a token, to `acptap relay`. An SSE consumer with a filter
// sees exactly the matching events in order (checked against record's own
// log); it disconnects after three, resumes with Last-Event-ID after the
// session, and gets the rest: no duplicate, no gap. A WebSocket consumer
// completes hello and receives the same events. A missing token is 401, a
// wrong one 403, a foreign Host 403.
func TestRelayConsumers_SSEAndWebSocket(t *testing.T) {
	store, relayStore := t.TempDir(), t.TempDir()
	tokenFile := filepath.Join(t.TempDir(), "token")
	const token = "team-token-0123456789"
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := startRelay(t, relayStore, "127.0.0.1:0", "--token-file", tokenFile, "--ping", "200ms")
	base := "http://" + r.addr

	// Refusals first: nothing is stored by them.
	for _, c := range []struct {
		method, path, token, host string
		want                      int
	}{
		{"POST", "/events", "", "", http.StatusUnauthorized},
		{"POST", "/events", "wrong", "", http.StatusForbidden},
		{"GET", "/stream", "", "", http.StatusUnauthorized},
		{"GET", "/stream", "wrong", "", http.StatusForbidden},
		{"GET", "/socket", "", "", http.StatusUnauthorized},
		{"GET", "/events", token, "evil.example", http.StatusForbidden},
		{"GET", "/events", token, "", http.StatusOK},
	} {
		req, _ := http.NewRequest(c.method, base+c.path, strings.NewReader("{}"))
		req.Header.Set("AEP-Version", "0.1")
		req.Header.Set("Content-Type", "application/json")
		if c.host != "" {
			req.Host = c.host
		}
		resp, err := http.DefaultClient.Do(authed(req, c.token))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s %s token %q host %q: %d, want %d", c.method, c.path, c.token, c.host, resp.StatusCode, c.want)
		}
	}

	live := openStream(t, base, token, url.Values{"filter": {consumerFilter}}.Encode(), "")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws://"+r.addr+"/socket", &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	write := func(v string) {
		if err := ws.Write(ctx, websocket.MessageText, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	read := func() map[string]any {
		for {
			_, b, err := ws.Read(ctx)
			if err != nil {
				t.Fatalf("websocket: %v", err)
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
	write(`{"type":"hello","versions":["0.1"],"role":"consumer","identity":{"agent":"aepe2e"},"capabilities":{}}`)
	if h := read(); h["type"] != "hello" || fmt.Sprint(h["versions"]) != "[0.1]" {
		t.Fatalf("hello: %v", h)
	}
	write(`{"type":"subscribe","id":"s1","filter":` + consumerFilter + `}`)
	if m := read(); m["type"] != "subscribed" {
		t.Fatalf("subscribe: %v", m)
	}

	// Three events live, then the consumer goes away while the session runs.
	type result struct{ res *testpeers.SDKResult }
	done := make(chan result, 1)
	ended := make(chan struct{}) // closed when the client returned, or failed the test (Goexit)
	go func() {
		defer close(ended)
		done <- result{testpeers.RunSDKClient(t, "v2-client.mjs", []string{"--cwd", store},
			record(t, store, "v2-agent.mjs", "ACPTAP_AEP_RELAY="+base, "ACPTAP_AEP_RELAY_TOKEN_FILE="+tokenFile, "ACPTAP_AEP_RELAY_FLUSH=20s"))}
	}()
	msgs := make(chan sseMessage, 3)
	go func() {
		defer close(msgs)
		for range 3 {
			m, ok := live.next(t)
			if !ok {
				return
			}
			msgs <- m
		}
	}()
	var got []sseMessage
	for len(got) < 3 {
		select {
		case m, ok := <-msgs:
			if !ok {
				t.Fatal("the stream ended")
			}
			got = append(got, m)
		case <-ended:
			// A session that failed never posts the events: fail here rather than wait
			// on the stream. One that ended has posted them; read on.
			if len(done) == 0 {
				t.Fatal("the SDK client failed before three events arrived live (see above)")
			}
			ended = nil
		}
	}
	live.body.Close()
	res := (<-done).res
	res.RequireOK(t)
	if l := readRelayLog(t, store); l.Lost != 0 {
		t.Fatalf("record lost events on the way to the relay: %+v", l)
	}
	ids, positions := wanted(t, filepath.Join(store, "aep", "acp", res.Summary.SessionID+".jsonl"))
	if len(ids) < 6 {
		t.Fatalf("the session has only %d tool and attention events", len(ids))
	}

	// Resume after the last id seen; live=0 ends the stream after the replay.
	rest := openStream(t, base, token, url.Values{"filter": {consumerFilter}, "live": {"0"}}.Encode(), got[len(got)-1].id)
	for {
		m, ok := rest.next(t)
		if !ok {
			break
		}
		got = append(got, m)
	}
	// Delivery is at-least-once (AEP-0003 §5: the relay forwards a
	// sender's redelivery, e.g. a post retried after a timeout on a loaded
	// machine), so the consumer dedupes on the event id, as consumers must;
	// a redelivery must be the same event.
	var gotPos, gotIDs []string
	first := map[string]string{}
	redelivered := 0
	for _, m := range got {
		var e event
		if err := json.Unmarshal([]byte(m.data), &e); err != nil {
			t.Fatal(err)
		}
		if m.event != e.Type {
			t.Errorf("event: %s for a %s", m.event, e.Type)
		}
		if data, seen := first[e.ID]; seen {
			if data != m.data {
				t.Errorf("event %s delivered twice with different content:\n%s\n%s", e.ID, data, m.data)
			}
			redelivered++
			continue
		}
		first[e.ID] = m.data
		gotPos, gotIDs = append(gotPos, m.id), append(gotIDs, e.ID)
	}
	if strings.Join(gotPos, " ") != strings.Join(positions, " ") || strings.Join(gotIDs, " ") != strings.Join(ids, " ") {
		t.Errorf("SSE consumer, live then resumed:\n got %v\nwant %v", gotPos, positions)
	}

	var wsIDs []string
	wsFirst := map[string]string{}
	for len(wsIDs) < len(ids) {
		m := read()
		id, _ := m["id"].(string)
		b, _ := json.Marshal(m)
		if data, seen := wsFirst[id]; seen {
			if data != string(b) {
				t.Errorf("event %s delivered twice over the socket with different content:\n%s\n%s", id, data, b)
			}
			redelivered++
			continue
		}
		wsFirst[id] = string(b)
		wsIDs = append(wsIDs, id)
	}
	if strings.Join(wsIDs, " ") != strings.Join(ids, " ") {
		t.Errorf("WebSocket consumer:\n got %v\nwant %v", wsIDs, ids)
	}
	t.Logf("%d matching events; SSE: 3 live, %d after resume; %d redeliveries", len(ids), len(got)-3, redelivered)
}

// selfSigned writes a certificate and key for 127.0.0.1 and returns their
// paths.
func selfSigned(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "acptap relay test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestRelayOverTLSWithAGeneratedToken: the relay serves https with
// --tls-cert/--tls-key and a token it generates (printed once, stored
// 0600); record posts the session there (trusting the certificate through
// SSL_CERT_FILE) and the relay holds exactly record's log.
func TestRelayOverTLSWithAGeneratedToken(t *testing.T) {
	store, relayStore := t.TempDir(), t.TempDir()
	cert, key := selfSigned(t)
	r := startRelay(t, relayStore, "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key)
	if r.token == "" {
		t.Fatal("no token generated")
	}
	st, err := os.Stat(filepath.Join(relayStore, "relay", "_token"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("stored token: %v %v", st, err)
	}
	res := testpeers.RunSDKClient(t, "v2-client.mjs", []string{"--cwd", store},
		record(t, store, "v2-agent.mjs", "ACPTAP_AEP_RELAY=https://"+r.addr, "ACPTAP_AEP_RELAY_TOKEN="+r.token, "SSL_CERT_FILE="+cert))
	res.RequireOK(t)
	local := readLines(t, filepath.Join(store, "aep", "acp", res.Summary.SessionID+".jsonl"))
	relayed := readLines(t, filepath.Join(relayStore, "relay", "acp", res.Summary.SessionID+".jsonl"))
	if len(local) == 0 || len(local) != len(relayed) || string(local[len(local)-1]) != string(relayed[len(relayed)-1]) {
		t.Fatalf("the relay holds %d lines, record's log %d", len(relayed), len(local))
	}
	if resp, err := http.Get("http://" + r.addr + "/healthz"); err == nil && resp.StatusCode == http.StatusOK {
		t.Error("plain HTTP answered on the TLS port")
	}
}

// TestRelayRefusesOffLoopbackWithoutAToken: --no-auth on a non-loopback
// address is refused before anything listens.
func TestRelayRefusesOffLoopbackWithoutAToken(t *testing.T) {
	out, err := exec.Command(acptapBin, "relay", "--addr", "0.0.0.0:0", "--no-auth", "--store", t.TempDir()).CombinedOutput()
	var ee *exec.ExitError
	if !asExit(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "refusing to serve 0.0.0.0:0 without a token") {
		t.Fatalf("exit %v: %s", err, out)
	}
}

func asExit(err error, ee **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	*ee = e
	return ok
}
