package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acptap/acptap/host/captured"
	"github.com/acptap/acptap/sdk"
)

// countMapper emits one record per line frame: {"n":<count>,"seq":<wire seq>},
// plus a final record at Finish. Behaviour per instance is scripted.
type countMapper struct {
	failAt  int           // fail the failAt-th Map call (1-based), 0: never
	stallAt int           // block forever on the stallAt-th Map call
	delay   time.Duration // sleep in every Map call
	calls   int
	release chan struct{}
}

func (m *countMapper) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "count", Version: "1", Inputs: []string{"acp/2@x"}, Outputs: []sdk.Format{"asr"}, Capabilities: []sdk.Capability{"record"}}, nil
}

func (m *countMapper) Start(context.Context, sdk.StartRequest) (sdk.Session, error) {
	return &countSession{m: m}, nil
}

type countSession struct {
	m *countMapper
	n int
}

func (s *countSession) Map(_ context.Context, frames []sdk.Frame) ([]sdk.Output, error) {
	s.m.calls++
	if s.m.failAt > 0 && s.m.calls == s.m.failAt {
		return nil, errors.New("injected failure")
	}
	if s.m.stallAt > 0 && s.m.calls == s.m.stallAt {
		<-s.m.release
		return nil, errors.New("released")
	}
	time.Sleep(s.m.delay)
	var outs []sdk.Output
	for _, f := range frames {
		if f.Kind != sdk.KindLine {
			continue
		}
		s.n++
		outs = append(outs, sdk.Output{Kind: sdk.ASRRecord, Session: "s", JSON: []byte(fmt.Sprintf(`{"n":%d,"seq":%d}`, s.n, f.Seq))})
	}
	return outs, nil
}

func (s *countSession) Finish(context.Context, string) ([]sdk.Output, error) {
	return []sdk.Output{{Kind: sdk.ASRRecord, Session: "s", JSON: []byte(fmt.Sprintf(`{"final":%d}`, s.n))}}, nil
}

type memSink struct {
	mu   sync.Mutex
	outs []string
	gaps []string
}

func (s *memSink) Output(plugin string, primary bool, o sdk.Output) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outs = append(s.outs, string(o.JSON))
}

func (s *memSink) Gap(plugin string, primary bool, through uint64, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gaps = append(s.gaps, fmt.Sprintf("%s after %d: %s", plugin, through, reason))
}

// run pushes lines through a live pipeline whose plugin instances come
// from mappers, in order (a restart takes the next one).
func run(t *testing.T, lines int, depth int, stall time.Duration, maxRestarts int, mappers ...*countMapper) (*memSink, Stats) {
	t.Helper()
	return runServed(t, nil, false, lines, depth, stall, maxRestarts, mappers...)
}

// runServed is run with each instance's mapper as serve makes it (nil: the
// mapper itself, in process), and with a pause every 97 lines when paced
// (live batches of every size, not one burst).
func runServed(t *testing.T, serve func(*countMapper) (sdk.Mapper, func(), error), paced bool, lines, depth int, stall time.Duration, maxRestarts int, mappers ...*countMapper) (*memSink, Stats) {
	t.Helper()
	var launched atomic.Int32
	launch := func(context.Context, string) (*Plugin, error) {
		i := int(launched.Add(1)) - 1
		if i >= len(mappers) {
			return nil, errors.New("no more instances")
		}
		m := mappers[i]
		var mapper sdk.Mapper = m
		stop := func() {}
		if serve != nil {
			var err error
			if mapper, stop, err = serve(m); err != nil {
				return nil, err
			}
		}
		return &Plugin{Name: "count", Mapper: mapper, Kill: func() {
			if m.release != nil {
				select {
				case <-m.release:
				default:
					close(m.release)
				}
			}
			stop()
		}}, nil
	}
	sink := &memSink{}
	p := New(Options{
		WirePath: filepath.Join(t.TempDir(), "w.jsonl"), Connection: "c-test", Mode: sdk.ModeRecord,
		Revisions: map[string][]string{"acp/2@x": {"count"}}, SchemaRevision: "x", DefaultRevision: "acp/2@x",
		Launch: launch, Sink: sink, BatchFrames: 8, FeederDepth: depth, MaxRestarts: maxRestarts, StallTimeout: stall,
	})
	items := make(chan captured.Item, 16)
	if err := p.Start(context.Background(), items); err != nil {
		t.Fatal(err)
	}
	feedLines(items, lines, paced)
	stats, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	return sink, stats
}

// feedLines queues an initialize exchange and lines numbered lines, pausing a millisecond
// every 97 when paced, and closes items.
func feedLines(items chan<- captured.Item, lines int, paced bool) {
	items <- captured.Item{Dir: sdk.C2A, At: time.Unix(1, 0), Line: []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2}}`)}
	items <- captured.Item{Dir: sdk.A2C, At: time.Unix(1, 0), Line: []byte(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2}}`)}
	for i := 0; i < lines; i++ {
		items <- captured.Item{Dir: sdk.A2C, At: time.Unix(2, 0), Line: []byte(fmt.Sprintf(`{"i":%d}`, i))}
		if paced && i%97 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	close(items)
}

func expected(lines int) []string {
	var want []string
	for i := 1; i <= lines+2; i++ {
		want = append(want, fmt.Sprintf(`{"n":%d,"seq":%d}`, i, i))
	}
	return append(want, fmt.Sprintf(`{"final":%d}`, lines+2))
}

func equal(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d outputs, want %d (first %v)", len(got), len(want), got[:min(len(got), 3)])
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("output %d = %s, want %s", i, got[i], want[i])
		}
	}
}

// A slow plugin falls behind its live queue and catches up from the wire
// log: every frame is still mapped once, in order.
func TestSlowPluginCatchesUpFromWireLog(t *testing.T) {
	sink, stats := run(t, 2000, 1, 0, 0, &countMapper{delay: time.Millisecond})
	equal(t, sink.outs, expected(2000))
	if stats.Frames != 2002 || stats.Restarts != 0 {
		t.Fatalf("stats %+v", stats)
	}
}

// A plugin that fails is restarted and re-fed from the first frame; the
// outputs it already delivered are not delivered twice.
func TestFailedPluginRestartsAndOutputsAreUnchanged(t *testing.T) {
	sink, stats := run(t, 500, 4, 0, 3, &countMapper{failAt: 5}, &countMapper{failAt: 9}, &countMapper{})
	equal(t, sink.outs, expected(500))
	if stats.Restarts != 2 || len(sink.gaps) != 0 {
		t.Fatalf("restarts %d, gaps %v", stats.Restarts, sink.gaps)
	}
}

// A plugin that does not answer is killed by the watchdog and restarted. The stall timeout
// leaves the restarted plugin's calls ample time on a loaded machine (at 200 ms, one run in
// a full `go test ./host/...` at load 12 timed the restarted one out too).
func TestStalledPluginIsRestarted(t *testing.T) {
	sink, stats := run(t, 300, 4, 2*time.Second, 1, &countMapper{stallAt: 3, release: make(chan struct{})}, &countMapper{})
	equal(t, sink.outs, expected(300))
	if stats.Restarts != 1 {
		t.Fatalf("restarts %d", stats.Restarts)
	}
}

// After the bound of restarts the connection goes capture-only and the gap
// is declared; capture still sees every frame.
func TestPluginGivesUpAndDeclaresGap(t *testing.T) {
	sink, stats := run(t, 300, 4, 0, 1, &countMapper{failAt: 3}, &countMapper{failAt: 2})
	if len(sink.gaps) != 1 {
		t.Fatalf("gaps %v", sink.gaps)
	}
	if stats.Frames != 302 {
		t.Fatalf("frames %d", stats.Frames)
	}
	want := expected(300)
	equal(t, sink.outs, want[:len(sink.outs)])
}
