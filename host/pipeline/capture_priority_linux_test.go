package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/acptap/acptap/host/captured"
	"github.com/acptap/acptap/host/priority"
	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/sdk"
)

// niceOf reads the calling thread's nice value back from /proc (field 19
// of /proc/self/task/<tid>/stat).
func niceOf(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(syscall.Gettid()) + "/stat")
	if err != nil {
		t.Error(err)
		return -100
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	n, _ := strconv.Atoi(f[16])
	return n
}

// niceSessions is a SessionStore that notes the nice value of the thread
// capture asks it from (capture observes a session as it appends it).
type niceSessions struct {
	t    *testing.T
	mu   sync.Mutex
	nice []int
}

func (s *niceSessions) Observe(id string) (wire.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nice = append(s.nice, niceOf(s.t))
	return wire.Session{ID: id}, nil
}

func (s *niceSessions) Prior(string, string, int) ([][]byte, error) { return nil, nil }

// TestLiveCaptureAndFeedersRunLowered: a live pipeline's capture runs on a
// thread at priority.CaptureTarget of the process's nice value and its
// feeders (seen from the plugin's launch, which a feeder calls; the plugin
// calls themselves run on goroutines of their own) at priority.Target, the
// plugins' priority; a rebuild's keep the normal priority. Read back from
// /proc.
func TestLiveCaptureAndFeedersRunLowered(t *testing.T) {
	own := niceOf(t)
	lines := []captured.Item{
		{Dir: sdk.C2A, At: time.Unix(1, 0), Line: []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2}}`)},
		{Dir: sdk.A2C, At: time.Unix(1, 0), Line: []byte(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2}}`)},
		{Dir: sdk.A2C, At: time.Unix(2, 0), Line: []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1"}}`)},
	}
	wirePath := filepath.Join(t.TempDir(), "w.jsonl")
	for _, mode := range []sdk.Mode{sdk.ModeRecord, sdk.ModeRebuild} {
		sessions := &niceSessions{t: t}
		var launchedMu sync.Mutex
		var launched []int
		launch := func(context.Context, string) (*Plugin, error) {
			launchedMu.Lock()
			launched = append(launched, niceOf(t))
			launchedMu.Unlock()
			return &Plugin{Name: "count", Mapper: &countMapper{}, Kill: func() {}}, nil
		}
		p := New(Options{
			WirePath: wirePath, Connection: "c-test", Mode: mode, Sessions: sessions,
			Revisions: map[string][]string{"acp/2@x": {"count"}}, SchemaRevision: "x", DefaultRevision: "acp/2@x",
			Launch: launch, Sink: &memSink{},
		})
		if mode == sdk.ModeRecord {
			items := make(chan captured.Item, len(lines))
			if err := p.Start(context.Background(), items); err != nil {
				t.Fatal(err)
			}
			for _, it := range lines {
				items <- it
			}
			close(items)
		} else if err := p.Rebuild(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Wait(); err != nil {
			t.Fatal(err)
		}
		wantCapture, wantFeeder := priority.CaptureTarget(own), priority.Target(own)
		if mode != sdk.ModeRecord {
			wantCapture, wantFeeder = own, own
		}
		if mode == sdk.ModeRecord && len(sessions.nice) == 0 {
			t.Fatalf("%s: capture observed no session", mode)
		}
		for _, n := range sessions.nice {
			if n != wantCapture {
				t.Errorf("%s: capture ran at nice %d, want %d", mode, n, wantCapture)
			}
		}
		if len(launched) == 0 {
			t.Fatalf("%s: no plugin launched", mode)
		}
		for _, n := range launched {
			if n != wantFeeder {
				t.Errorf("%s: feeder ran at nice %d, want %d", mode, n, wantFeeder)
			}
		}
	}
	if n := niceOf(t); n != own {
		t.Errorf("the test's thread is at nice %d now, was %d", n, own)
	}
}

// priorityPipeline is a recording's pipeline whose capture reports, through the session
// store, the nice value it ran at for each frame naming a session; a batch per chunk. It
// returns the test's own nice value and capture's lowered one.
func priorityPipeline(t *testing.T) (own, low int, sessions *niceSessions, p *Pipeline) {
	own = niceOf(t)
	low = priority.CaptureTarget(own)
	if low == own {
		t.Skip("the process runs at the lowest priority already")
	}
	sessions = &niceSessions{t: t}
	p = New(Options{
		WirePath: filepath.Join(t.TempDir(), "w.jsonl"), Connection: "c-test", Mode: sdk.ModeRecord, Sessions: sessions,
		Revisions: map[string][]string{"acp/2@x": {}}, SchemaRevision: "x", DefaultRevision: "acp/2@x", ForceRevision: "acp/2@x",
		Sink: &memSink{}, BatchFrames: 1,
	})
	return own, low, sessions, p
}

// TestCaptureRaisedWhileQueueFull: capture runs below the tee while the tee's queue is
// less than a quarter full, at the normal priority from the batch after one that found it
// fuller (so a long burst slows the tee instead of overflowing the queue), and below again
// once the queue is down to a sixteenth. Seen from the session store capture calls.
func TestCaptureRaisedWhileQueueFull(t *testing.T) {
	own, low, sessions, p := priorityPipeline(t)
	items := make(chan captured.Item, 1024) // its items never count: the bytes do
	if err := p.Start(context.Background(), items); err != nil {
		t.Fatal(err)
	}
	// send hands capture one chunk naming a new session, charged to a bound of its own
	// that is used/1000 full (as the tee's would be while capture takes it).
	n := 0
	send := func(used int64) {
		n++
		ch := &captured.Chunk{Data: []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(n) + `,"result":{"sessionId":"s-` + strconv.Itoa(n) + `"}}` + "\n")}
		bound := captured.NewBound(1000)
		if !bound.Take(used) {
			t.Fatal("bound refused")
		}
		ch.Charge(bound, used)
		items <- captured.Item{Dir: sdk.A2C, At: time.Unix(int64(n), 0), Chunk: ch}
	}
	for _, used := range []int64{30, 600, 600, 30, 30} {
		send(used)
	}
	close(items)
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	// Observed while taking: 1 at 3 % (low), 2 at 60 % (still low: the switch comes after
	// its batch), 3 at 60 % (raised), 4 at 3 % (raised: lowered after its batch), 5 (low).
	want := []int{low, low, own, own, low}
	if len(sessions.nice) != len(want) {
		t.Fatalf("observed %d sessions (%v), want %d", len(sessions.nice), sessions.nice, len(want))
	}
	for i, w := range want {
		if sessions.nice[i] != w {
			t.Errorf("session %d observed at nice %d, want %d (all: %v)", i+1, sessions.nice[i], w, sessions.nice)
		}
	}
}

// TestCaptureRaisedWhileItemsFull: the tee's queue is bounded in items too, and short reads
// fill the items long before the bytes: capture is raised when the items are past a quarter
// of the queue, whatever the bytes.
func TestCaptureRaisedWhileItemsFull(t *testing.T) {
	own, low, sessions, p := priorityPipeline(t)
	items := make(chan captured.Item, 8)
	bound := captured.NewBound(1 << 30)
	for n := 1; n <= 6; n++ { // queued before capture starts: 5 of 8 wait behind the first
		ch := &captured.Chunk{Data: []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(n) + `,"result":{"sessionId":"s-` + strconv.Itoa(n) + `"}}` + "\n")}
		bound.Take(100)
		ch.Charge(bound, 100)
		items <- captured.Item{Dir: sdk.A2C, At: time.Unix(int64(n), 0), Chunk: ch}
	}
	close(items)
	if err := p.Start(context.Background(), items); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	// 1 is taken low with 5 of 8 items waiting; 2-5 raised; at 6 the queue is empty, and
	// capture goes below again after its batch.
	want := []int{low, own, own, own, own, own}
	if fmt.Sprint(sessions.nice) != fmt.Sprint(want) {
		t.Errorf("sessions observed at nice %v, want %v", sessions.nice, want)
	}
}
