package pipeline

import (
	"context"
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
