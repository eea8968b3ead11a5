package otlp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/acptap/acptap/host/otlp/spool"
	"github.com/acptap/acptap/internal/otlpcollector"
	"github.com/acptap/acptap/sdk/aep"
)

func newExporter(t *testing.T, dir string, cl *Client, maxBytes int64) *Exporter {
	t.Helper()
	sp, err := spool.Open(dir, maxBytes)
	if err != nil {
		t.Fatal(err)
	}
	return NewExporter(ExporterOptions{Spool: sp, Client: cl, MaxCapture: aep.Metadata, Version: "test",
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, Linger: 5 * time.Millisecond})
}

// key identifies an AEP event across deliveries (consumers dedupe on
// (source, id); the fixture reuses ids across sources).
func key(l otlpcollector.Log) string {
	return fmt.Sprint(l.Attrs["aep.source"], "|", l.Attrs["aep.event_id"])
}

// checkAtLeastOnceInOrder: every golden event arrived; a duplicate is the
// same record (same ids, same content); and per session the first
// arrivals keep the fixture's order.
func checkAtLeastOnceInOrder(t *testing.T, lines [][]byte, got []otlpcollector.Log) {
	t.Helper()
	first := map[string]otlpcollector.Log{}
	var order []string
	for _, l := range got {
		k := key(l)
		if prev, ok := first[k]; ok {
			a, _ := json.Marshal(prev)
			b, _ := json.Marshal(l)
			if string(a) != string(b) {
				t.Errorf("duplicate %s differs:\n%s\n%s", k, a, b)
			}
			continue
		}
		first[k] = l
		order = append(order, k)
	}
	pos := map[string]int{}
	for i, k := range order {
		pos[k] = i
	}
	lastBySession := map[string]int{}
	for _, line := range lines {
		var ev struct{ ID, Source, Session string }
		json.Unmarshal(line, &ev)
		k := fmt.Sprint(ev.Source, "|", ev.ID)
		p, ok := pos[k]
		if !ok {
			t.Errorf("event %s never arrived", k)
			continue
		}
		if last, ok := lastBySession[ev.Session]; ok && p < last {
			t.Errorf("session %s: %s arrived before an earlier event", ev.Session, k)
		}
		lastBySession[ev.Session] = p
	}
}

// TestCollectorDownDuringTheSession: the collector is down while the
// session's events come in; Event never blocks; once the collector comes
// back everything is delivered, in order per session.
func TestCollectorDownDuringTheSession(t *testing.T) {
	c := otlpcollector.NewStopped(t)
	e := newExporter(t, filepath.Join(t.TempDir(), "spool"), targets(t, c, ProtocolGRPC), 0)
	e.Start(context.Background())
	lines := goldenLines(t)
	start := time.Now()
	for _, l := range lines {
		e.Event("", l)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Event took %s with the collector down", d)
	}
	// Wait for failed attempts, with records waiting in the spool.
	deadline := time.Now().Add(30 * time.Second)
	for e.snd.Stats().Retries < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if e.snd.Stats().Retries < 2 || e.opts.Spool.Empty() {
		t.Fatalf("no retries against the down collector: %+v", e.snd.Stats())
	}
	c.Restart(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s := e.Shutdown(ctx)
	if s.Spooled != 0 || len(s.Dropped) != 0 || s.Delivery.LogRecords < uint64(len(lines)) {
		t.Fatalf("stats %+v", s)
	}
	checkAtLeastOnceInOrder(t, lines, c.Logs())
	if len(c.Spans()) == 0 {
		t.Fatal("no spans")
	}
}

// TestRetriesResendTheSameIDs: the collector takes the log records but
// refuses the spans for a while; the segment is retried whole, so log
// records arrive more than once — each time the same record — and the
// spans arrive once it takes them, with the ids of the first attempt.
func TestRetriesResendTheSameIDs(t *testing.T) {
	c := otlpcollector.Start(t)
	c.RefuseSpans(true)
	e := newExporter(t, filepath.Join(t.TempDir(), "spool"), targets(t, c, ProtocolHTTP), 0)
	e.Start(context.Background())
	lines := goldenLines(t)
	for _, l := range lines {
		e.Event("", l)
	}
	c.Wait(t, 30*time.Second, "log records delivered twice", func(l []otlpcollector.Log, _ []otlpcollector.Span) bool { return len(l) >= 2*len(lines) })
	c.RefuseSpans(false)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if s := e.Shutdown(ctx); s.Spooled != 0 || s.Delivery.Retries == 0 {
		t.Fatalf("stats %+v", s)
	}
	checkAtLeastOnceInOrder(t, lines, c.Logs())
	// The spans equal a fresh projection's (the ids derive from the events).
	want := map[string]bool{}
	p := NewProjector(aep.Metadata, "test", nil)
	for _, l := range lines {
		its, _ := p.Project(l)
		for _, it := range its {
			if it.Kind == spool.Spans {
				want[string(it.Data)] = true
			}
		}
	}
	ids := map[string]bool{}
	for _, s := range c.Spans() {
		ids[s.TraceID+"/"+s.SpanID] = true
	}
	if len(ids) == 0 || len(c.Spans()) == 0 {
		t.Fatal("no spans")
	}
	e2 := map[string]bool{}
	for _, s := range c.Spans() {
		if e2[s.SpanID] {
			t.Errorf("span %s (%s) arrived twice", s.SpanID, s.Name)
		}
		e2[s.SpanID] = true
	}
	if len(want) == 0 {
		t.Fatal("the projection completed no runs")
	}
}

// TestEventNeverBlocksAndQueueDropsLowFirst: with nothing draining the
// queue, Event returns at once; over the bound debug and info events go
// first, notice and above are kept, and every drop is counted.
func TestEventNeverBlocksAndQueueDropsLowFirst(t *testing.T) {
	sp, _ := spool.Open(t.TempDir(), 0)
	e := NewExporter(ExporterOptions{Spool: sp, Queue: 10})
	for i := range 1000 {
		sev := "info"
		if i%100 == 0 {
			sev = "notice"
		}
		e.Event("", fmt.Appendf(nil, `{"aep":"0.1","id":"E%d","type":"x.t.e.v","session":"s","severity":%q}`, i, sev))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	notices := 0
	for _, q := range e.queue {
		if q.rank == aep.SeverityRank("notice") {
			notices++
		}
	}
	if len(e.queue) != 10 || notices != 10 || e.stats.Dropped["info"] != 990 || e.stats.Dropped["notice"] != 0 {
		t.Fatalf("queue %d notices %d dropped %v", len(e.queue), notices, e.stats.Dropped)
	}
}

// TestAEP8_1_SpoolFullDeclaresItsDrops: a spool too small for the session
// drops debug and info records first and declares the drops with a WARN
// record of its own (acptap.otlp.dropped), delivered with the rest; no
// notice-or-higher event is lost while lower ones could go.
func TestAEP8_1_SpoolFullDeclaresItsDrops(t *testing.T) {
	c := otlpcollector.NewStopped(t)
	e := newExporter(t, filepath.Join(t.TempDir(), "spool"), targets(t, c, ProtocolGRPC), 128<<10)
	e.Start(context.Background())
	lines := goldenLines(t)
	for round := range 4 { // several sessions' worth through a small spool
		for _, l := range lines {
			var ev map[string]any
			json.Unmarshal(l, &ev)
			ev["id"] = fmt.Sprint(ev["id"], "-", round)
			b, _ := json.Marshal(ev)
			e.Event("", b)
		}
		time.Sleep(50 * time.Millisecond) // separate segments
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(e.opts.Spool.Dropped()) == 0 || e.opts.Spool.Dropped() == [6]uint64{} {
		if time.Now().After(deadline) {
			t.Fatal("nothing dropped")
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.Restart(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s := e.Shutdown(ctx)
	d := e.opts.Spool.Dropped()
	t.Logf("dropped by rank %v", d)
	if d[0]+d[1] == 0 || d[2]+d[3]+d[4]+d[5] != 0 {
		t.Fatalf("dropped by rank %v (stats %+v)", d, s)
	}
	var notice, declared int
	for _, l := range c.Logs() {
		if l.SeverityNumber >= 10 && l.EventName != "acptap.otlp.dropped" {
			notice++
		}
		if l.EventName == "acptap.otlp.dropped" && l.SeverityText == "WARN" && l.Attrs["acptap.dropped.total"].(int64) > 0 {
			declared++
		}
	}
	want := 0
	for _, l := range lines {
		var ev struct{ Severity string }
		json.Unmarshal(l, &ev)
		if aep.SeverityRank(ev.Severity) >= 2 {
			want++
		}
	}
	if notice < 4*want || declared == 0 {
		t.Fatalf("%d notice+ records arrived (want %d), %d drop declarations", notice, 4*want, declared)
	}
}

// TestAEP8_1_QueueDropsAreDeclared: events the in-memory queue had to
// drop are declared downstream by an acptap.otlp.dropped record counting
// them by severity; the kept notices are delivered.
func TestAEP8_1_QueueDropsAreDeclared(t *testing.T) {
	c := otlpcollector.Start(t)
	sp, _ := spool.Open(t.TempDir(), 0)
	e := NewExporter(ExporterOptions{Spool: sp, Client: targets(t, c, ProtocolHTTP), Queue: 10, Version: "test"})
	for i := range 1000 {
		sev := "info"
		if i%100 == 0 {
			sev = "notice"
		}
		e.Event("", fmt.Appendf(nil, `{"aep":"0.1","id":"E%d","type":"x.t.e.v","time":"2026-07-03T10:00:00.000Z","agent":"a","session":"s","severity":%q}`, i, sev))
	}
	e.Start(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if s := e.Shutdown(ctx); s.Spooled != 0 || s.Dropped["info"] != 990 {
		t.Fatalf("stats %+v", s)
	}
	var notices, declared int
	for _, l := range c.Logs() {
		switch {
		case l.EventName == "acptap.otlp.dropped":
			if l.Attrs["acptap.dropped.info"] == int64(990) && l.Attrs["acptap.dropped.notice"] == nil && l.Service == "acptap" {
				declared++
			}
		case l.SeverityText == "INFO2":
			notices++
		}
	}
	if notices != 10 || declared != 1 {
		t.Fatalf("%d notices, %d declarations in %d records", notices, declared, len(c.Logs()))
	}
}

// TestHangingCollectorNeverHoldsTheExit: a collector that accepts
// connections and never answers neither blocks Event nor holds Shutdown
// past its deadline; what was not delivered stays in the spool.
func TestHangingCollectorNeverHoldsTheExit(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	l, tr, _ := Endpoints(Settings{Endpoint: srv.URL}, func(string) string { return "" })
	cl, err := NewClient(l, tr)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	e := newExporter(t, filepath.Join(t.TempDir(), "spool"), cl, 0)
	e.Start(context.Background())
	for _, line := range goldenLines(t) {
		e.Event("", line)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan ExportStats, 1)
	go func() { done <- e.Shutdown(ctx) }()
	select {
	case s := <-done:
		if s.Spooled == 0 || s.Delivery.LogRecords != 0 {
			t.Fatalf("stats %+v", s)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Shutdown held past its deadline by a hanging collector")
	}
}
