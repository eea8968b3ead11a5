package pipeline

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/acptap/acptap/host/captured"
	"github.com/acptap/acptap/internal/pluginwire"
	"github.com/acptap/acptap/sdk"
)

// TestConvertFeedersLiveFromStart: a conversion's feeders, attached before
// capture has written anything, take live batches from the first
// (liveFromStart: the first batch is a live one) and deliver every output once, in order, as feeders that
// start behind and catch up from the wire log do — with a queue that holds
// every batch, one that fills (the feeder falls behind and catches up), a
// slow plugin, and plugins that fail and are restarted.
func TestConvertFeedersLiveFromStart(t *testing.T) {
	defer func(old bool) { liveFromStart = old }(liveFromStart)
	for _, live := range []bool{false, true} {
		liveFromStart = live
		for _, c := range []struct {
			name         string
			lines, depth int
			restarts     int
			mappers      []*countMapper
		}{
			{"a queue for every batch", 3000, 3000/8 + 2, 0, []*countMapper{{}}},
			{"a queue that fills", 3000, 2, 0, []*countMapper{{delay: 50 * time.Microsecond}}},
			{"restarts", 500, 500/8 + 2, 3, []*countMapper{{failAt: 5}, {failAt: 9}, {}}},
		} {
			t.Run(fmt.Sprintf("live=%v/%s", live, c.name), func(t *testing.T) {
				before := firstLive.Load()
				sink := runConvert(t, c.lines, c.depth, c.restarts, c.mappers...)
				equal(t, sink.outs, expected(c.lines))
				// The first batch is live exactly when the feeder starts live; later ones
				// may be either (a feeder that fell behind goes live once it caught up).
				if took := firstLive.Load() > before; took != live {
					t.Errorf("first batch live: %v", took)
				}
			})
		}
	}
}

// runConvert is runServed for a conversion: its revision forced, no
// initialize to detect, the plugin served over gRPC.
func runConvert(t *testing.T, lines, depth, maxRestarts int, mappers ...*countMapper) *memSink {
	t.Helper()
	i := 0
	var p *Pipeline
	launch := func(context.Context, string) (*Plugin, error) {
		if i >= len(mappers) {
			return nil, fmt.Errorf("no more instances")
		}
		if i == 0 {
			// The first instance starts once capture has written a line: a feeder that
			// starts behind and finds the wire log still empty is caught up at once, and
			// its first batch is a live one (seen under load).
			for {
				p.mu.Lock()
				n := p.wireSeq
				p.mu.Unlock()
				if n > 0 {
					break
				}
				time.Sleep(time.Millisecond)
			}
		}
		m := mappers[i]
		i++
		c, stop, err := pluginwire.ServeInProcess(m, t.TempDir())
		if err != nil {
			return nil, err
		}
		return &Plugin{Name: "count", Mapper: c, Kill: stop}, nil
	}
	sink := &memSink{}
	p = New(Options{
		WirePath: filepath.Join(t.TempDir(), "w.jsonl"), Connection: "c-test", Mode: sdk.ModeConvert, ForceRevision: "acp/2@x",
		Revisions: map[string][]string{"acp/2@x": {"count"}}, SchemaRevision: "x", DefaultRevision: "acp/2@x",
		Launch: launch, Sink: sink, BatchFrames: 8, FeederDepth: depth, MaxRestarts: maxRestarts,
	})
	items := make(chan captured.Item, 16)
	if err := p.Start(context.Background(), items); err != nil {
		t.Fatal(err)
	}
	feedLines(items, lines, false)
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	return sink
}
