package pipeline

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/sdk"
)

// BenchmarkRebuildHost times the host's side of a rebuild of one wire log
// — the planning scan, then the pipeline's first pass and the feeders'
// shared window, with two in-process plugins that map nothing — with the
// scan's decoded entries kept for the window (kept) and without (the
// window decodes the log again), alternately. host-cpu-ms is the process's
// CPU time (user + sys) per rebuild. The log is ACPTAP_BENCH_WIRE, or a
// synthetic one of ACPTAP_BENCH_WIRE_MIB (default 32) MiB of updates; the
// budget of the kept entries is ACPTAP_BENCH_KEEP_MIB (default 32, as
// rebuild's).
//
//	ACPTAP_BENCH_WIRE=/path/to/wire.jsonl go test -run '^$' -bench RebuildHost -benchtime 8x ./host/pipeline/
func BenchmarkRebuildHost(b *testing.B) {
	path := os.Getenv("ACPTAP_BENCH_WIRE")
	if path == "" {
		path = benchWireLog(b)
	}
	var cpu [2]time.Duration
	var wall [2]time.Duration
	var n [2]int
	for i := 0; b.Loop(); i++ {
		k := i % 2
		c0, t0 := selfCPU(), time.Now()
		hostRebuild(b, path, k == 1)
		wall[k] += time.Since(t0)
		cpu[k] += selfCPU() - c0
		n[k]++
	}
	for k, name := range []string{"decoded-twice", "kept"} {
		if n[k] > 0 {
			b.ReportMetric(float64(cpu[k].Milliseconds())/float64(n[k]), name+"-host-cpu-ms")
			b.ReportMetric(float64(wall[k].Milliseconds())/float64(n[k]), name+"-wall-ms")
		}
	}
}

func hostRebuild(b *testing.B, path string, keep bool) {
	var budget atomic.Int64
	if keep {
		mib := 32
		if v := os.Getenv("ACPTAP_BENCH_KEEP_MIB"); v != "" {
			fmt.Sscan(v, &mib)
		}
		budget.Store(int64(mib) << 20)
	}
	scan, err := ScanWireKeeping(path, &budget)
	if err != nil {
		b.Fatal(err)
	}
	launch := func(_ context.Context, name string) (*Plugin, error) {
		return &Plugin{Name: name, Mapper: nopMapper{name}, Kill: func() {}}, nil
	}
	p := New(Options{
		Scan: scan, WirePath: path, Connection: "c-bench", Mode: sdk.ModeRebuild,
		Revisions: map[string][]string{"acp/2@x": {"a", "b"}}, SchemaRevision: "x", DefaultRevision: "acp/2@x",
		ForceRevision: "acp/2@x", Launch: launch, Sink: &pluginSink{}, Sessions: fakeSessions{}, ResolveSessions: true,
	})
	if err := p.Rebuild(context.Background()); err != nil {
		b.Fatal(err)
	}
	if _, err := p.Wait(); err != nil {
		b.Fatal(err)
	}
}

type nopMapper struct{ name string }

func (m nopMapper) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: m.name, Version: "1", Inputs: []string{"acp/2@x"}, Outputs: []sdk.Format{"asr"}, Capabilities: []sdk.Capability{"record"}}, nil
}

func (m nopMapper) Start(context.Context, sdk.StartRequest) (sdk.Session, error) {
	return nopSession{}, nil
}

type nopSession struct{}

func (nopSession) Map(context.Context, []sdk.Frame) ([]sdk.Output, error) { return nil, nil }
func (nopSession) Finish(context.Context, string) ([]sdk.Output, error)   { return nil, nil }

func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchWireLog writes a synthetic wire log of session/update lines.
func benchWireLog(b *testing.B) string {
	mib := 32
	if v, err := fmt.Sscan(os.Getenv("ACPTAP_BENCH_WIRE_MIB"), &mib); v != 1 || err != nil {
		mib = 32
	}
	path := b.TempDir() + "/w.jsonl"
	w, err := wire.Create(path, wire.Header{Connection: "c-bench", Agent: wire.Agent{Command: []string{"agent"}}, StartedAt: time.Unix(100, 0)})
	if err != nil {
		b.Fatal(err)
	}
	at := time.Unix(200, 5).UTC()
	w.Append(wire.Entry{Type: wire.TypeFrame, Dir: sdk.A2C, At: at, Line: []byte(`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"sess_a"}}`)})
	for i := 0; int64(i)*320 < int64(mib)<<20; i++ {
		at = at.Add(time.Millisecond)
		line := fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_a","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk %d of a message, \"quoted\" words and a tab\tand more text to make it about as long as the workload's lines are"}}}}`, i)
		if _, err := w.Append(wire.Entry{Type: wire.TypeFrame, Dir: sdk.A2C, At: at, Line: []byte(line)}); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}
