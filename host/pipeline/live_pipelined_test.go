package pipeline

import (
	"fmt"
	"testing"
	"time"

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
	serve := func(m *countMapper) (sdk.Mapper, func(), error) {
		c, stop, err := pluginwire.ServeInProcess(m, t.TempDir())
		if err == nil {
			t.Cleanup(stop)
		}
		return c, stop, err
	}
	return runServed(t, serve, true, lines, depth, stall, maxRestarts, mappers...)
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
