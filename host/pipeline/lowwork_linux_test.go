package pipeline

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/acptap/acptap/host/captured"
	"github.com/acptap/acptap/host/priority"
	"github.com/acptap/acptap/internal/pluginwire"
	"github.com/acptap/acptap/sdk"
)

// lowSink records, for each output, the nice value of the thread that delivered it and
// whether the feeder was on its lowered goroutine.
type lowSink struct {
	memSink
	t     *testing.T
	p     *Pipeline
	mu    sync.Mutex
	nices map[bool][]int // by onLow
}

func (s *lowSink) Output(plugin string, primary bool, o sdk.Output) {
	s.memSink.Output(plugin, primary, o)
	s.p.mu.Lock()
	f := s.p.feeders[0]
	s.p.mu.Unlock()
	n := niceOf(s.t)
	s.mu.Lock()
	s.nices[f.onLow] = append(s.nices[f.onLow], n)
	s.mu.Unlock()
}

// TestFeederRelaysLiveUnlowered: a recording's feeder maps the live batches capture hands
// it at the host's priority, on a goroutine of no thread of its own (a wake-up is one Go
// scheduler switch, not four), and catches up from the wire log at the plugins'
// priority (priority.Target), where it also launches the plugin: the lines written
// before the plugin attached come from the wire log, those after it live. Every output
// is delivered once, in order, either way, one batch at a time or two in flight (over
// gRPC). Read back from /proc.
func TestFeederRelaysLiveUnlowered(t *testing.T) {
	own := niceOf(t)
	low := priority.Target(own)
	if low == own {
		t.Skip("the process runs at the lowest priority already")
	}
	for _, pipelined := range []bool{false, true} {
		t.Run(fmt.Sprintf("pipelined=%v", pipelined), func(t *testing.T) {
			defer func(old bool) { pipelineLive = old }(pipelineLive)
			pipelineLive = pipelined
			var launchedAt []int
			attached := make(chan struct{})
			launch := func(context.Context, string) (*Plugin, error) {
				launchedAt = append(launchedAt, niceOf(t))
				<-attached // the lines before are in the wire log: the feeder catches up
				if !pipelined {
					return &Plugin{Name: "count", Mapper: &countMapper{}, Kill: func() {}}, nil
				}
				c, stop, err := pluginwire.ServeInProcess(&countMapper{}, t.TempDir()) // over gRPC: pipelined batches
				if err != nil {
					return nil, err
				}
				t.Cleanup(stop)
				return &Plugin{Name: "count", Mapper: c, Kill: stop}, nil
			}
			sink := &lowSink{t: t, nices: map[bool][]int{}}
			p := New(Options{
				WirePath: filepath.Join(t.TempDir(), "w.jsonl"), Connection: "c-test", Mode: sdk.ModeRecord,
				Revisions: map[string][]string{"acp/2@x": {"count"}}, SchemaRevision: "x", DefaultRevision: "acp/2@x",
				Launch: launch, Sink: sink, BatchFrames: 8,
			})
			sink.p = p
			items := make(chan captured.Item, 16)
			if err := p.Start(context.Background(), items); err != nil {
				t.Fatal(err)
			}
			items <- captured.Item{Dir: sdk.C2A, At: time.Unix(1, 0), Line: []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2}}`)}
			items <- captured.Item{Dir: sdk.A2C, At: time.Unix(1, 0), Line: []byte(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2}}`)}
			const before, after = 100, 100
			for i := 0; i < before; i++ {
				items <- captured.Item{Dir: sdk.A2C, At: time.Unix(2, 0), Line: []byte(fmt.Sprintf(`{"i":%d}`, i))}
			}
			// The plugin attaches once capture has written the lines before; the feeder is
			// live once it has caught up with them.
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
				p.mu.Lock()
				written := p.wireSeq
				p.mu.Unlock()
				if written >= before+2 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("capture did not write the lines")
				}
			}
			close(attached)
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
				p.mu.Lock()
				live := len(p.feeders) == 1 && !p.feeders[0].behind.Load()
				p.mu.Unlock()
				if live {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the feeder did not catch up")
				}
			}
			for i := before; i < before+after; i++ {
				items <- captured.Item{Dir: sdk.A2C, At: time.Unix(2, 0), Line: []byte(fmt.Sprintf(`{"i":%d}`, i))}
			}
			close(items)
			if _, err := p.Wait(); err != nil {
				t.Fatal(err)
			}
			equal(t, sink.outs, expected(before+after))
			if len(launchedAt) != 1 || launchedAt[0] != low {
				t.Errorf("plugin launched at nice %v, want %d", launchedAt, low)
			}
			if len(sink.nices[true]) == 0 || len(sink.nices[false]) == 0 {
				t.Fatalf("outputs delivered catching up %d, live %d: want both", len(sink.nices[true]), len(sink.nices[false]))
			}
			for onLow, want := range map[bool]int{true: low, false: own} {
				for _, n := range sink.nices[onLow] {
					if n != want {
						t.Errorf("an output delivered (lowered goroutine %v) at nice %d, want %d", onLow, n, want)
						break
					}
				}
			}
		})
	}
}
