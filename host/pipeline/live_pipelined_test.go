package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acptap/acptap/host/captured"
	"github.com/acptap/acptap/internal/pluginwire"
	"github.com/acptap/acptap/sdk"
)

// runGRPC is run with each plugin instance served over real gRPC (so its
// session can take pipelined batches) and with a recording's feeders
// pipelining (pipelineLive) or not.
func runGRPC(t *testing.T, pipelined bool, lines, depth int, stall time.Duration, maxRestarts int, mappers ...*countMapper) (*memSink, Stats) {
	t.Helper()
	defer func(old bool) { pipelineLive = old }(pipelineLive)
	pipelineLive = pipelined
	var launched atomic.Int32
	launch := func(context.Context, string) (*Plugin, error) {
		i := int(launched.Add(1)) - 1
		if i >= len(mappers) {
			return nil, errors.New("no more instances")
		}
		m := mappers[i]
		c, stop, err := pluginwire.ServeInProcess(m, t.TempDir())
		if err != nil {
			return nil, err
		}
		t.Cleanup(stop)
		return &Plugin{Name: "count", Mapper: c, Kill: func() {
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
	items <- captured.Item{Dir: sdk.C2A, At: time.Unix(1, 0), Line: []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2}}`)}
	items <- captured.Item{Dir: sdk.A2C, At: time.Unix(1, 0), Line: []byte(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2}}`)}
	for i := 0; i < lines; i++ {
		items <- captured.Item{Dir: sdk.A2C, At: time.Unix(2, 0), Line: []byte(fmt.Sprintf(`{"i":%d}`, i))}
		if i%97 == 0 {
			time.Sleep(time.Millisecond) // live batches of every size, not one burst
		}
	}
	close(items)
	stats, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	return sink, stats
}

// TestLivePipelinedSameOutputs: a recording whose plugin takes pipelined
// batches (live and catching up) delivers every output once, in order, as
// with one batch at a time; through a slow plugin that falls behind, plugins
// that fail and are restarted, one that stalls and is killed, and one that
// is given up.
func TestLivePipelinedSameOutputs(t *testing.T) {
	for _, pipelined := range []bool{false, true} {
		t.Run(fmt.Sprintf("pipelined=%v", pipelined), func(t *testing.T) {
			sink, stats := runGRPC(t, pipelined, 3000, 4, 0, 0, &countMapper{})
			equal(t, sink.outs, expected(3000))
			if stats.Frames != 3002 || stats.Restarts != 0 {
				t.Fatalf("stats %+v", stats)
			}

			sink, _ = runGRPC(t, pipelined, 1000, 1, 0, 0, &countMapper{delay: 200 * time.Microsecond})
			equal(t, sink.outs, expected(1000))

			sink, stats = runGRPC(t, pipelined, 500, 4, 0, 3, &countMapper{failAt: 5}, &countMapper{failAt: 9}, &countMapper{})
			equal(t, sink.outs, expected(500))
			if stats.Restarts != 2 || len(sink.gaps) != 0 {
				t.Fatalf("restarts %d, gaps %v", stats.Restarts, sink.gaps)
			}

			sink, stats = runGRPC(t, pipelined, 300, 4, 2*time.Second, 1, &countMapper{stallAt: 3, release: make(chan struct{})}, &countMapper{})
			equal(t, sink.outs, expected(300))
			if stats.Restarts != 1 {
				t.Fatalf("restarts %d", stats.Restarts)
			}

			sink, stats = runGRPC(t, pipelined, 300, 4, 0, 1, &countMapper{failAt: 3}, &countMapper{failAt: 2})
			if len(sink.gaps) != 1 || stats.Frames != 302 {
				t.Fatalf("gaps %v, frames %d", sink.gaps, stats.Frames)
			}
			want := expected(300)
			equal(t, sink.outs, want[:len(sink.outs)])
		})
	}
}
