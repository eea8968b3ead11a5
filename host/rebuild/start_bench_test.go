package rebuild

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/acptap/acptap/host/pipeline"
	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/sdk"
)

// BenchmarkRebuildStart times a rebuild's start — planning (the scan),
// the import of a log from outside the store, the pipeline's first pass —
// up to the plugins' first session start, with plugins in process that
// map nothing, the import copied while the log is scanned (copyEarly) and
// after, and mapped from the log while it is copied (mapFromLog), in
// turn; and the whole rebuild. The log is
// ACPTAP_BENCH_WIRE (skipped without one: record one with BenchmarkRebuild
// and ACPTAP_BENCH_KEEP=1).
//
//	ACPTAP_BENCH_WIRE=/path/to/wire.jsonl go test -run '^$' -bench RebuildStart -benchtime 8x ./host/rebuild/
func BenchmarkRebuildStart(b *testing.B) {
	path := os.Getenv("ACPTAP_BENCH_WIRE")
	if path == "" {
		b.Skip("ACPTAP_BENCH_WIRE names no wire log")
	}
	var start, all [3]time.Duration
	var n [3]int
	defer func(e, m bool) { copyEarly, mapFromLog = e, m }(copyEarly, mapFromLog)
	for i := 0; b.Loop(); i++ {
		k := i % 3
		copyEarly, mapFromLog = k >= 1, k == 2
		b.StopTimer()
		st, err := store.Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		var once sync.Once
		var started time.Time
		o := Options{Store: st, Pipeline: pipeline.Options{Revisions: map[string][]string{rev: {"acpv2", "aep"}},
			SchemaRevision: "2.0.0-alpha.9", DefaultRevision: rev,
			Launch: func(_ context.Context, name string) (*pipeline.Plugin, error) {
				return &pipeline.Plugin{Name: name, Mapper: nopMapper{name, func() { once.Do(func() { started = time.Now() }) }}, Kill: func() {}}, nil
			}}}
		b.StartTimer()
		t0 := time.Now()
		if _, err := Run(context.Background(), o, Request{Files: []string{path}}); err != nil {
			b.Fatal(err)
		}
		all[k] += time.Since(t0)
		start[k] += started.Sub(t0)
		n[k]++
	}
	for k, name := range []string{"copy-after", "copy-early", "from-log"} {
		if n[k] > 0 {
			b.ReportMetric(float64(start[k].Milliseconds())/float64(n[k]), name+"-start-ms")
			b.ReportMetric(float64(all[k].Milliseconds())/float64(n[k]), name+"-all-ms")
		}
	}
}

type nopMapper struct {
	name  string
	start func()
}

func (m nopMapper) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: m.name, Version: "1", Inputs: []string{rev}, Outputs: []sdk.Format{sdk.FormatASR}, Capabilities: []sdk.Capability{"record"}}, nil
}

func (m nopMapper) Start(context.Context, sdk.StartRequest) (sdk.Session, error) {
	m.start()
	return nopSession{}, nil
}

type nopSession struct{}

func (nopSession) Map(context.Context, []sdk.Frame) ([]sdk.Output, error) { return nil, nil }
func (nopSession) Finish(context.Context, string) ([]sdk.Output, error)   { return nil, nil }
