package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acptap/acptap/host/captured"
	"github.com/acptap/acptap/sdk"
)

// burstRun is a recording's capture (no plugin) fed as the tee feeds it: chunks charged to a
// byte bound, the doorbell rung after them; the test's tee queues more at capture's waits
// (onCaptureWait), as a tee copying a burst does while capture sleeps.
type burstRun struct {
	t     *testing.T
	p     *Pipeline
	items chan captured.Item
	bell  chan struct{}
	bound *captured.Bound
	path  string

	mu     sync.Mutex
	n      int      // lines queued
	seen   []uint64 // frames capture had taken at each of the hook's pushes
	armed  atomic.Bool
	onWait func(r *burstRun) // the hook, once armed (capture's goroutine)
}

func startBurstRun(t *testing.T, limit int64, onWait func(r *burstRun)) *burstRun {
	return startBurstRunItems(t, 4096, limit, onWait)
}

// startBurstRunItems is startBurstRun with a queue of so many items.
func startBurstRunItems(t *testing.T, items int, limit int64, onWait func(r *burstRun)) *burstRun {
	t.Helper()
	r := &burstRun{t: t, items: make(chan captured.Item, items), bell: make(chan struct{}, 1),
		bound: captured.NewBound(limit), path: filepath.Join(t.TempDir(), "w.jsonl"), onWait: onWait}
	r.p = New(Options{
		WirePath: r.path, Connection: "c-test", Mode: sdk.ModeRecord,
		Revisions: map[string][]string{"acp/2@x": {}}, SchemaRevision: "x", DefaultRevision: "acp/2@x", ForceRevision: "acp/2@x",
		Sink: &memSink{}, Coalesce: 2 * time.Millisecond, Doorbell: r.bell,
	})
	hook := func() {
		if r.armed.Load() {
			r.onWait(r)
		}
	}
	onCaptureWait.Store(&hook)
	t.Cleanup(func() { onCaptureWait.Store(nil) })
	if err := r.p.Start(context.Background(), r.items); err != nil {
		t.Fatal(err)
	}
	return r
}

// queue puts one line on the queue, charged size bytes (the tee charges a whole read buffer
// for a long read; here more, so that a nap's worth is a burst however long the nap).
func (r *burstRun) queue(size int64) {
	r.mu.Lock()
	line := fmt.Sprintf(`{"i":%d}`, r.n)
	r.n++
	r.mu.Unlock()
	ch := &captured.Chunk{Data: []byte(line + "\n")}
	if !r.bound.Take(size) {
		r.t.Errorf("the bound refused %d bytes", size)
		return
	}
	ch.Charge(r.bound, size)
	r.items <- captured.Item{Dir: sdk.C2A, At: time.Now(), Chunk: ch}
}

func (r *burstRun) ring() {
	select {
	case r.bell <- struct{}{}:
	default:
	}
}

// push is the hook's: one line more, rung, with what capture had taken by then.
func (r *burstRun) push(size int64) {
	r.mu.Lock()
	r.seen = append(r.seen, r.p.Snapshot().Frames)
	r.mu.Unlock()
	r.queue(size)
	r.ring()
}

func (r *burstRun) queued() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// burst queues n lines at once, rings, and arms the hook.
func (r *burstRun) burst(n int, size int64) {
	for range n {
		r.queue(size)
	}
	r.armed.Store(true)
	r.ring()
}

// finish ends the queue and checks that the wire log holds every line, in order.
func (r *burstRun) finish() {
	r.t.Helper()
	r.armed.Store(false)
	close(r.items)
	r.ring()
	if _, err := r.p.Wait(); err != nil {
		r.t.Fatal(err)
	}
	b, err := os.ReadFile(r.path)
	if err != nil {
		r.t.Fatal(err)
	}
	at := 0
	for i := range r.queued() {
		q, _ := json.Marshal(fmt.Sprintf(`{"i":%d}`, i))
		k := bytes.Index(b[at:], q)
		if k < 0 {
			r.t.Fatalf("line %d of %d not in the wire log after line %d", i, r.queued(), i-1)
		}
		at += k + len(q)
	}
}

func (r *burstRun) frames() uint64 { return r.p.Snapshot().Frames }

// TestCaptureHoldsOffThroughBurst (ASR-723: every frame in the wire log, in order): while
// the tee queues a burst faster than capture takes it, under the raise threshold, capture
// takes nothing; once the burst pauses (nothing queued during a nap) it writes all of it.
// Ten reads queued at once: capture takes a batch (maxHeldChunks), finds the rest (16 MiB)
// behind it, and holds off; the tee queues a read at each of its naps, six times, then
// stops. Without the hold capture took every read as it came.
func TestCaptureHoldsOffThroughBurst(t *testing.T) {
	const first, more = 10, 6
	r := startBurstRun(t, 1<<40, func(r *burstRun) {
		if r.queued() < first+more {
			r.push(8 << 20)
		}
	})
	before := holds.Load()
	r.burst(first, 8<<20)
	waitFor(t, "every line taken", func() bool { return r.frames() == first+more })
	r.finish()
	for i, n := range r.seen {
		if n != maxHeldChunks {
			t.Errorf("capture had taken %d lines when the tee queued line %d of the burst, want %d (all: %v)", n, first+i, maxHeldChunks, r.seen)
			break
		}
	}
	if h := holds.Load() - before; h != 1 {
		t.Errorf("capture held off %d times, want 1", h)
	}
}

// TestCaptureHoldEndsAtRaiseThreshold: a hold ends once the queue passes the raise
// threshold (a quarter), and capture takes the queue while the burst goes on (raised, see
// TestCaptureRaisedWhileQueueFull), instead of letting the burst overflow it. Quarter-GiB
// reads into a 4 GiB queue: the fourth read pushed during the hold passes the quarter.
// Without the threshold, the hold went on to the burst's end.
func TestCaptureHoldEndsAtRaiseThreshold(t *testing.T) {
	const first, total = 10, 20
	r := startBurstRun(t, 4<<30, func(r *burstRun) {
		if r.queued() < total {
			r.push(256 << 20)
		}
	})
	r.burst(first, 8<<20)
	waitFor(t, "every line taken", func() bool { return r.frames() == total })
	r.finish()
	// Pushes 1-4 during the hold; the fourth passed the quarter (16 MiB + 1 GiB).
	for i, n := range r.seen {
		if held := n == maxHeldChunks; held != (i < 4) {
			t.Fatalf("capture had taken %d lines at the burst's push %d (all: %v): want %d for the first 4 (the hold), more after", n, i+1, r.seen, maxHeldChunks)
		}
	}
}

// TestCaptureHoldIsBounded: a burst that neither pauses nor fills a quarter of the queue
// (a stream just fast enough) is held for maxHold at most; capture then takes it while it
// goes on. Without the bound, it was never taken.
func TestCaptureHoldIsBounded(t *testing.T) {
	var taken atomic.Bool
	var fill float64 // the fullest the queue was, bytes or items, before capture took more
	r := startBurstRunItems(t, 1<<16, 1<<50, func(r *burstRun) {
		if taken.Load() {
			return
		}
		if r.frames() > maxHeldChunks {
			taken.Store(true)
			return
		}
		r.push(8 << 20)
		fill = max(fill, r.bound.Use(), float64(len(r.items))/float64(cap(r.items)))
	})
	r.burst(10, 8<<20)
	waitFor(t, "capture taking the burst while it goes on", taken.Load)
	waitFor(t, "every line taken", func() bool { return r.frames() == uint64(r.queued()) })
	r.finish()
	if fill >= raiseAbove {
		t.Errorf("capture took the burst with the queue %.2f full, want it under the raise threshold (a bound on the hold)", fill)
	}
}
