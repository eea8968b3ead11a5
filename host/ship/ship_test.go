package ship

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/acptap/acptap/host/config"
	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/internal/natstest"
	"github.com/acptap/acptap/internal/private"
)

func natsConfig(url string) config.ShipNATS {
	return config.ShipNATS{URL: url, Stream: "ACPTAP", Subject: "acptap", CreateStream: true, Replicas: 1,
		Interval: 50 * time.Millisecond, Timeout: 5 * time.Second, Durable: "acptap-collect"}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

func shipper(t *testing.T, cfg config.ShipNATS, root, origin string) *Shipper {
	t.Helper()
	conn, err := Connect(ctx(t), cfg, "test shipper")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	return &Shipper{Root: root, Origin: origin, Prefix: cfg.Subject, Conn: conn}
}

func pass(t *testing.T, sh *Shipper) Stats {
	t.Helper()
	st, err := sh.Pass(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Stuck) > 0 {
		t.Fatalf("stuck: %v", st.Stuck)
	}
	return st
}

func collect(t *testing.T, cfg config.ShipNATS, central string) *Collector {
	t.Helper()
	conn, err := Connect(ctx(t), cfg, "test collector")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := &Collector{Root: central, Prefix: cfg.Subject, Durable: cfg.Durable, Conn: conn, Wait: 10 * time.Millisecond}
	if err := c.RunUntilCaughtUp(ctx(t)); err != nil {
		t.Fatal(err)
	}
	return c
}

// writeStore lays out a small store: a primary stream, a plugin's stream,
// an AEP file, a hashed session directory with its id file, a wire log.
func writeStore(t *testing.T, root string, lines int) {
	t.Helper()
	long := strings.Repeat("x", 300) // long ids hash
	st, err := store.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"sess-1", "sess.with dots/and*stars>", long} {
		w, _, err := st.OpenStream(id)
		if err != nil {
			t.Fatal(err)
		}
		for i := range lines {
			if err := w.WriteLine(fmt.Appendf(nil, `{"seq":%d,"session":%q}`, i+1, id[:min(len(id), 20)])); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
		a, _, err := st.OpenAEP(id)
		if err != nil {
			t.Fatal(err)
		}
		a.WriteLine([]byte(`{"type":"session.started"}`))
		a.Close()
	}
	p, _, err := st.OpenPluginStream("sess-1", "acme")
	if err != nil {
		t.Fatal(err)
	}
	p.WriteLine([]byte(`{"vendor":true}`))
	p.Close()
	os.MkdirAll(filepath.Join(root, "wire"), 0o700)
	os.WriteFile(filepath.Join(root, "wire", "conn-1.jsonl"), []byte("{\"t\":\"header\"}\n"), 0o600)
}

// sameOutputs compares every output of local with the central copy.
func sameOutputs(t *testing.T, local, central string, wire bool) {
	t.Helper()
	outs, err := Outputs(local, wire)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) == 0 {
		t.Fatal("no outputs in the local store")
	}
	got, err := Outputs(central, wire)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(outs) {
		t.Errorf("central store has\n%v\nlocal has\n%v", got, outs)
	}
	for _, rel := range outs {
		a, _ := os.ReadFile(filepath.Join(local, rel))
		b, err := os.ReadFile(filepath.Join(central, rel))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs: local %d bytes, central %d bytes (%v)", rel, len(a), len(b), err)
		}
	}
}

func TestTokenRoundTrip(t *testing.T) {
	for _, s := range []string{"", "a", "sess.1", "a b*c>d%e", "stream.asr.jsonl", "ü\x00\xff", "alice@laptop"} {
		tok := Token(s)
		if strings.ContainsAny(tok, ".*> \t") {
			t.Errorf("Token(%q) = %q holds a subject metacharacter", s, tok)
		}
		back, err := Untoken(tok)
		if err != nil || back != s {
			t.Errorf("Untoken(Token(%q)) = %q, %v", s, back, err)
		}
	}
	if _, err := Untoken("a%2"); err == nil {
		t.Error("a truncated escape was accepted")
	}
	if _, err := Untoken("%61"); err == nil {
		t.Error("an escaped plain byte was accepted (two spellings of one token)")
	}
}

func TestParseSubjectRefusesPathsOutsideTheLayout(t *testing.T) {
	ok := Subject("acptap", "alice@laptop", "sessions/s1/stream.asr.jsonl")
	if o, rel, err := ParseSubject("acptap", ok); err != nil || o != "alice@laptop" || rel != "sessions/s1/stream.asr.jsonl" {
		t.Errorf("ParseSubject(%q) = %q %q %v", ok, o, rel, err)
	}
	for _, bad := range []string{
		Subject("acptap", "alice", "sessions/../../etc/passwd"),
		Subject("acptap", "alice", "../x.jsonl"),
		Subject("acptap", "..", "wire/c.jsonl"),
		Subject("acptap", "alice", "logs/acptap.log"),
		Subject("acptap", "alice", "sessions/s1/stream.asr.jsonl.prev-1"),
		Subject("acptap", "alice", ".collect/x"),
		Subject("acptap", "a/b", "wire/c.jsonl"),
		"acptap.alice",
		"other.alice.wire.c%2Ejsonl",
	} {
		if o, rel, err := ParseSubject("acptap", bad); err == nil {
			t.Errorf("ParseSubject(%q) accepted %q %q", bad, o, rel)
		}
	}
}

// TestShipAndCollect: a store shipped and collected is byte-identical in
// the central store, and lines appended later follow.
func TestShipAndCollect(t *testing.T) {
	srv := natstest.Start(t)
	cfg := natsConfig(srv.URL())
	local, central := t.TempDir(), t.TempDir()
	writeStore(t, local, 50)
	sh := shipper(t, cfg, local, "alice@laptop")
	sh.Wire = true
	st := pass(t, sh)
	if st.Lines == 0 || st.Messages == 0 {
		t.Fatalf("nothing shipped: %+v", st)
	}
	collect(t, cfg, central)
	sameOutputs(t, local, filepath.Join(central, "alice@laptop"), true)

	// More lines, and a torn (uncommitted) last line that must wait.
	w, _, _ := mustStore(t, local).OpenStream("sess-1")
	w.WriteLine([]byte(`{"seq":51}`))
	w.Close()
	f, _ := os.OpenFile(filepath.Join(local, "sessions", "sess-1", "stream.asr.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"seq":52,"torn"`)
	f.Close()
	st = pass(t, sh)
	if st.Lines != 1 {
		t.Errorf("second pass shipped %d lines, want 1 (the torn tail waits)", st.Lines)
	}
	if again := pass(t, sh); again.Lines != 0 || again.Messages != 0 {
		t.Errorf("a pass with nothing new shipped %+v", again)
	}
	collect(t, cfg, central)
	b, _ := os.ReadFile(filepath.Join(central, "alice@laptop", "sessions", "sess-1", "stream.asr.jsonl"))
	if !bytes.HasSuffix(b, []byte("{\"seq\":51}\n")) {
		t.Errorf("central stream does not end with the appended line: ...%q", b[max(0, len(b)-40):])
	}
}

func mustStore(t *testing.T, root string) *store.Store {
	st, err := store.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestLostCursorResyncs: with the cursor file gone (or a publish whose
// acknowledgement was lost), the shipper takes the server's last message as
// the truth: nothing is published twice.
func TestLostCursorResyncs(t *testing.T) {
	srv := natstest.Start(t)
	cfg := natsConfig(srv.URL())
	local, central := t.TempDir(), t.TempDir()
	writeStore(t, local, 20)
	sh := shipper(t, cfg, local, "alice")
	pass(t, sh)
	before := streamMsgs(t, sh)
	if err := os.Remove(sh.CursorPath()); err != nil {
		t.Fatal(err)
	}
	st := pass(t, sh)
	if st.Lines != 0 || st.Resyncs == 0 {
		t.Errorf("after losing the cursors: %+v, want 0 lines and resyncs", st)
	}
	if after := streamMsgs(t, sh); after != before {
		t.Errorf("stream grew from %d to %d messages", before, after)
	}
	// A stale cursor (the state before the last publish, as after a crash
	// between the publish and the cursor save).
	cur, _ := loadCursors(sh.CursorPath())
	c := cur.m["sessions/sess-1/stream.asr.jsonl"]
	old := *c
	w, _, _ := mustStore(t, local).OpenStream("sess-1")
	w.WriteLine([]byte(`{"seq":21}`))
	w.Close()
	pass(t, sh)
	cur, _ = loadCursors(sh.CursorPath())
	cur.m["sessions/sess-1/stream.asr.jsonl"] = &old
	cur.save()
	before = streamMsgs(t, sh)
	st = pass(t, sh)
	if st.Resyncs != 1 || st.Lines != 0 {
		t.Errorf("stale cursor: %+v, want one resync and nothing published", st)
	}
	if after := streamMsgs(t, sh); after != before {
		t.Errorf("stream grew from %d to %d messages after a stale cursor", before, after)
	}
	collect(t, cfg, central)
	sameOutputs(t, local, filepath.Join(central, "alice"), false)
}

func streamMsgs(t *testing.T, sh *Shipper) uint64 {
	t.Helper()
	info, err := sh.Conn.Stream.Info(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// TestDuplicatePublishIsANoOp: the same chunk published again (a client
// retry after a timeout) is recognised by the server, and a collector that
// receives a chunk twice writes it once.
func TestDuplicatePublishIsANoOp(t *testing.T) {
	srv := natstest.Start(t)
	cfg := natsConfig(srv.URL())
	local, central := t.TempDir(), t.TempDir()
	writeStore(t, local, 5)
	sh := shipper(t, cfg, local, "alice")
	pass(t, sh)
	before := streamMsgs(t, sh)
	// Republish the first message of one subject with its own id.
	subj := Subject("acptap", "alice", "sessions/sess-1/stream.asr.jsonl")
	first, err := sh.Conn.Stream.GetMsg(ctx(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	_ = subj
	m := nats.NewMsg(first.Subject)
	for _, k := range []string{nats.MsgIdHdr, HeaderGen, HeaderLine, HeaderCount} {
		m.Header.Set(k, first.Header.Get(k))
	}
	m.Data = first.Data
	ack, err := sh.Conn.JS.PublishMsg(ctx(t), m)
	if err != nil {
		t.Fatal(err)
	}
	if !ack.Duplicate {
		t.Error("the server stored a resent chunk again")
	}
	// A copy without the id gets through the server; the collector must
	// still write it once.
	m2 := nats.NewMsg(first.Subject)
	m2.Header = nats.Header{}
	for _, k := range []string{HeaderGen, HeaderLine, HeaderCount} {
		m2.Header.Set(k, first.Header.Get(k))
	}
	m2.Data = first.Data
	if _, err := sh.Conn.JS.PublishMsg(ctx(t), m2); err != nil {
		t.Fatal(err)
	}
	if after := streamMsgs(t, sh); after != before+1 {
		t.Fatalf("stream has %d messages, want %d", after, before+1)
	}
	c := collect(t, cfg, central)
	if d := c.Stats()["duplicates"]; d != 1 {
		t.Errorf("collector counted %d duplicates, want 1", d)
	}
	sameOutputs(t, local, filepath.Join(central, "alice"), false)
}

// TestRewrittenOutputShipsAsNewGeneration: a rebuild replaces a stream's
// bytes; the central copy follows (the old one kept aside).
func TestRewrittenOutputShipsAsNewGeneration(t *testing.T) {
	srv := natstest.Start(t)
	cfg := natsConfig(srv.URL())
	local, central := t.TempDir(), t.TempDir()
	writeStore(t, local, 10)
	sh := shipper(t, cfg, local, "alice")
	pass(t, sh)
	collect(t, cfg, central)
	p := filepath.Join(local, "sessions", "sess-1", "stream.asr.jsonl")
	if err := private.WriteFileAtomic(p, []byte("{\"rebuilt\":1}\n{\"rebuilt\":2}\n")); err != nil {
		t.Fatal(err)
	}
	st := pass(t, sh)
	if st.NewGens != 1 {
		t.Errorf("%d new generations, want 1", st.NewGens)
	}
	c := collect(t, cfg, central)
	if r := c.Stats()["rotated"]; r != 1 {
		t.Errorf("collector rotated %d outputs, want 1", r)
	}
	sameOutputs(t, local, filepath.Join(central, "alice"), false)
	if _, err := os.Stat(filepath.Join(central, "alice", "sessions", "sess-1", "stream.asr.jsonl.prev-g1")); err != nil {
		t.Errorf("the first generation was not kept aside: %v", err)
	}
	// In place too: truncated and rewritten, same inode.
	os.WriteFile(p, []byte("{\"again\":1}\n"), 0o600)
	if st := pass(t, sh); st.NewGens != 1 {
		t.Errorf("in-place rewrite: %d new generations, want 1", st.NewGens)
	}
	collect(t, cfg, central)
	sameOutputs(t, local, filepath.Join(central, "alice"), false)
}

// TestLongLinesTravelInParts: a line longer than the server's max_payload
// is shipped in parts and arrives whole.
func TestLongLinesTravelInParts(t *testing.T) {
	srv := natstest.Start(t, natstest.WithMaxPayload(64<<10))
	cfg := natsConfig(srv.URL())
	local, central := t.TempDir(), t.TempDir()
	writeStore(t, local, 3)
	w, _, _ := mustStore(t, local).OpenStream("sess-1")
	big := fmt.Appendf(nil, `{"big":%q}`, strings.Repeat("0123456789", 50_000)) // 500 kB
	w.WriteLine(big)
	w.WriteLine([]byte(`{"after":1}`))
	w.Close()
	sh := shipper(t, cfg, local, "alice")
	st := pass(t, sh)
	if st.Messages < 8 {
		t.Errorf("a 500 kB line went in %d messages under a 64 KiB max_payload", st.Messages)
	}
	// Lose the cursor in the middle of nothing: a resync must land after
	// the last part.
	os.Remove(sh.CursorPath())
	if st := pass(t, sh); st.Lines != 0 {
		t.Errorf("resync after parts shipped %d lines again", st.Lines)
	}
	collect(t, cfg, central)
	sameOutputs(t, local, filepath.Join(central, "alice"), false)
}

// TestCollectorCrashBetweenWriteAndAck: bytes a collector wrote but never
// acknowledged (it died) are cut and come again; a state directory lost as
// well is rebuilt from the file.
func TestCollectorCrashBetweenWriteAndAck(t *testing.T) {
	srv := natstest.Start(t)
	cfg := natsConfig(srv.URL())
	local, central := t.TempDir(), t.TempDir()
	writeStore(t, local, 10)
	sh := shipper(t, cfg, local, "alice")
	pass(t, sh)
	collect(t, cfg, central)
	w, _, _ := mustStore(t, local).OpenStream("sess-1")
	w.WriteLine([]byte(`{"seq":11}`))
	w.Close()
	pass(t, sh)
	// The collector died after writing half of the next chunk.
	cf := filepath.Join(central, "alice", "sessions", "sess-1", "stream.asr.jsonl")
	f, _ := os.OpenFile(cf, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"seq":1`)
	f.Close()
	collect(t, cfg, central)
	sameOutputs(t, local, filepath.Join(central, "alice"), false)

	// State lost, torn tail on the file, and everything delivered again.
	os.RemoveAll(filepath.Join(central, StateDir))
	f, _ = os.OpenFile(cf, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"torn`)
	f.Close()
	conn, err := Connect(ctx(t), cfg, "t")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.Stream.DeleteConsumer(ctx(t), cfg.Durable); err != nil {
		t.Fatal(err)
	}
	c := collect(t, cfg, central)
	if c.Stats()["duplicates"] == 0 {
		t.Error("a full redelivery found no duplicates")
	}
	sameOutputs(t, local, filepath.Join(central, "alice"), false)
}

// TestTwoCollectorsShareTheWork: two collectors on one durable consumer
// and one central store, running while the origin ships, write every line
// once, in order.
func TestTwoCollectorsShareTheWork(t *testing.T) {
	srv := natstest.Start(t)
	cfg := natsConfig(srv.URL())
	local, central := t.TempDir(), t.TempDir()
	writeStore(t, local, 200)
	run, cancel := context.WithCancel(ctx(t))
	var wg sync.WaitGroup
	cols := make([]*Collector, 2)
	for i := range cols {
		conn, err := Connect(ctx(t), cfg, "collector")
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		cols[i] = &Collector{Root: central, Prefix: cfg.Subject, Durable: cfg.Durable, Conn: conn,
			Wait: 5 * time.Millisecond, Batch: 4}
		if _, err := cols[i].Consumer(ctx(t)); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() { defer wg.Done(); cols[i].Run(run) }()
	}
	sh := shipper(t, cfg, local, "alice")
	sh.ChunkBytes = 512 // many small chunks, so both collectors get some of each file
	pass(t, sh)
	collect(t, cfg, central) // returns once the shared consumer has nothing pending
	cancel()
	wg.Wait()
	a, b := cols[0].Stats(), cols[1].Stats()
	t.Logf("collector stats: %v / %v", a, b)
	if a["lines"]+b["lines"] == 0 {
		t.Error("the two collectors wrote nothing")
	}
	sameOutputs(t, local, filepath.Join(central, "alice"), false)
}

// TestServerRestartMidShipping: the server goes away between passes and
// comes back; what was written meanwhile is shipped once it is back.
func TestServerRestartMidShipping(t *testing.T) {
	srv := natstest.Start(t)
	cfg := natsConfig(srv.URL())
	local, central := t.TempDir(), t.TempDir()
	writeStore(t, local, 10)
	sh := shipper(t, cfg, local, "alice")
	pass(t, sh)
	before := streamMsgs(t, sh)
	srv.Stop()
	w, _, _ := mustStore(t, local).OpenStream("sess-1")
	w.WriteLine([]byte(`{"seq":11}`))
	w.Close()
	short, cancel := context.WithTimeout(context.Background(), time.Second)
	if _, err := sh.Pass(short); err == nil {
		t.Error("a pass with the server down reported no error")
	}
	cancel()
	srv.Restart()
	// The connection reconnects on its own. The publish of the failed pass
	// may have been sent from the client's reconnect buffer meanwhile; the
	// next pass then finds it there instead of publishing again.
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := sh.Pass(ctx(t))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pass succeeded after the restart: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if after := streamMsgs(t, sh); after != before+1 {
		t.Errorf("the stream holds %d new messages for one new line", after-before)
	}
	collect(t, cfg, central)
	sameOutputs(t, local, filepath.Join(central, "alice"), false)
}

// TestOriginCannotPublishAsAnother: with the permissions of
// docs/team-store.md, alice may publish under her own name only.
func TestOriginCannotPublishAsAnother(t *testing.T) {
	srv := natstest.Start(t, natstest.WithUsers(
		&server.User{Username: "admin", Password: "admin"},
		&server.User{Username: "alice", Password: "pw", Permissions: serverPermissions(OriginPermissions("acptap", "ACPTAP", "alice"))},
	))
	admin := natsConfig(srv.URL())
	admin.User, admin.PasswordFile = "admin", writeFile(t, "admin")
	conn, err := Connect(ctx(t), admin, "admin") // creates the stream
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	cfg := natsConfig(srv.URL())
	cfg.User, cfg.PasswordFile = "alice", writeFile(t, "pw")
	local := t.TempDir()
	writeStore(t, local, 3)
	as := func(origin string) error {
		conn, err := Connect(ctx(t), cfg, "alice")
		if err != nil {
			return err
		}
		defer conn.Close()
		sh := &Shipper{Root: local, Origin: origin, Prefix: "acptap", Conn: conn}
		os.RemoveAll(filepath.Join(local, "ship"))
		_, err = sh.Pass(ctx(t))
		return err
	}
	if err := as("alice"); err != nil {
		t.Fatalf("alice shipping as herself: %v", err)
	}
	if err := as("bob"); err == nil {
		t.Fatal("alice shipped under bob's name")
	} else {
		t.Logf("refused as expected: %v", err)
	}
	// And a bare publish under bob's subject is not stored.
	conn, err = Connect(ctx(t), cfg, "alice")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	short, cancel := context.WithTimeout(ctx(t), 2*time.Second)
	defer cancel()
	if _, err := conn.JS.Publish(short, "acptap.bob.wire.x%2Ejsonl", []byte("forged\n")); err == nil {
		t.Error("a publish under another origin was acknowledged")
	}
	adminConn, err := Connect(ctx(t), admin, "admin")
	if err != nil {
		t.Fatal(err)
	}
	defer adminConn.Close()
	info, err := adminConn.Stream.Info(ctx(t), jetstream.WithSubjectFilter("acptap.bob.>"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(info.State.Subjects); n != 0 {
		t.Errorf("the stream holds %d subjects under bob", n)
	}
}

func writeFile(t *testing.T, s string) string {
	p := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(p, []byte(s+"\n"), 0o600)
	return p
}

func serverPermissions(p Permissions) *server.Permissions {
	return &server.Permissions{Publish: &server.SubjectPermission{Allow: p.Publish},
		Subscribe: &server.SubjectPermission{Allow: p.Subscribe}}
}
