package bench

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/acptap/acptap/bench/internal/acpgen"
	"github.com/acptap/acptap/host/pluginhost"
	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/internal/pluginwire"
	"github.com/acptap/acptap/plugins/acpv2"
	"github.com/acptap/acptap/sdk"
)

var (
	framesOnce  sync.Once
	framesCache []sdk.Frame
	framesTurns int
)

// updatesTurns is ACPTAP_BENCH_UPDATES in turns.
func updatesTurns() int {
	return max(1, envInt("ACPTAP_BENCH_UPDATES", 200_000)/acpgen.UpdatesPerTurn)
}

// benchFrames is the session of updatesTurns() turns as frames, built once.
func benchFrames() []sdk.Frame {
	framesOnce.Do(func() {
		framesTurns = updatesTurns()
		framesCache = sessionFrames(framesTurns)
	})
	return framesCache
}

// startBench starts the benchmarks' acpv2 session on m.
func startBench(b *testing.B, m sdk.Mapper) sdk.Session {
	b.Helper()
	sess, err := m.Start(context.Background(), sdk.StartRequest{Connection: "c-bench", WireLog: "wire/c-bench.jsonl",
		Input: acpv2.Input, Mode: sdk.ModeRecord})
	if err != nil {
		b.Fatal(err)
	}
	return sess
}

// mapAll maps frames in batches and finishes; it returns the output count.
func mapAll(b *testing.B, m sdk.Mapper, frames []sdk.Frame, batch int) int {
	b.Helper()
	ctx := context.Background()
	sess := startBench(b, m)
	n := 0
	for len(frames) > 0 {
		k := min(batch, len(frames))
		outs, err := sess.Map(ctx, frames[:k])
		if err != nil {
			b.Fatal(err)
		}
		n, frames = n+len(outs), frames[k:]
	}
	outs, err := sess.Finish(ctx, "eof")
	if err != nil {
		b.Fatal(err)
	}
	return n + len(outs)
}

// mapAllPipelined is mapAll with two batches in flight, as the host's offline feeders send
// them (pluginwire's remote sessions: Submit, then Collect the oldest).
func mapAllPipelined(b *testing.B, m sdk.Mapper, frames []sdk.Frame, batch int) int {
	b.Helper()
	ctx := context.Background()
	sess := startBench(b, m)
	ps, ok := sess.(interface {
		Submit(ctx context.Context, frames []sdk.Frame) error
		Collect(ctx context.Context) ([]sdk.Output, error)
	})
	if !ok {
		b.Fatalf("%T has no pipelined batches", sess)
	}
	n, inFlight := 0, 0
	for len(frames) > 0 || inFlight > 0 {
		if len(frames) > 0 && inFlight < 2 {
			k := min(batch, len(frames))
			if err := ps.Submit(ctx, frames[:k]); err != nil {
				b.Fatal(err)
			}
			frames, inFlight = frames[k:], inFlight+1
			continue
		}
		outs, err := ps.Collect(ctx)
		if err != nil {
			b.Fatal(err)
		}
		n, inFlight = n+len(outs), inFlight-1
	}
	outs, err := sess.Finish(ctx, "eof")
	if err != nil {
		b.Fatal(err)
	}
	return n + len(outs)
}

// BenchmarkPluginFrames maps a synthetic ACP v2 session of
// ACPTAP_BENCH_UPDATES session/update lines (after initialize, session/new
// and session/prompt) in batches of 256 frames through the acpv2 mapper
// three ways, one after the other in each op:
//
//	inproc   acpv2.New() called directly
//	grpc     the same over real gRPC and protobuf in this process (pluginwire.ServeInProcess)
//	process  the acptap binary started as the built-in plugin (pluginhost.Launch, go-plugin)
//	pipelined  the same process with two batches in flight, as the host's offline feeders send them
//
// It reports frames/s of each, process/inproc, the plugin's launch time,
// and for reference the host's own per-line rates on the way to a plugin:
// appending to the wire log (capture), reading it back (a feeder that fell
// behind catches up from it) and the router (pluginwire.FrameBuilder, which the
// feeder runs before every Map).
func BenchmarkPluginFrames(b *testing.B) {
	acptap, _ := binaries(b)
	frames := benchFrames()
	const batch = 256
	var tIn, tGRPC, tProc, tPipe, tFB, tWrite, tRead, launch time.Duration
	outs := 0
	for b.Loop() {
		t0 := time.Now()
		outs = mapAll(b, acpv2.New(), frames, batch)
		tIn += time.Since(t0)

		dir, err := os.MkdirTemp(tmpRoot, "grpc-")
		if err != nil {
			b.Fatal(err)
		}
		m, stop, err := pluginwire.ServeInProcess(acpv2.New(), dir)
		if err != nil {
			b.Fatal(err)
		}
		t0 = time.Now()
		if n := mapAll(b, m, frames, batch); n != outs {
			b.Fatalf("grpc: %d outputs, in process %d", n, outs)
		}
		tGRPC += time.Since(t0)
		stop()

		t0 = time.Now()
		inst, err := pluginhost.Launch(context.Background(),
			pluginhost.Spec{Name: acpv2.Name, Builtin: true, Path: acptap}, nil)
		if err != nil {
			b.Fatal(err)
		}
		launch += time.Since(t0)
		t0 = time.Now()
		if n := mapAll(b, inst.Mapper, frames, batch); n != outs {
			b.Fatalf("process: %d outputs, in process %d", n, outs)
		}
		tProc += time.Since(t0)
		inst.Kill()

		// The same process, driven as the host drives it offline (rebuild, convert, the
		// finisher): the next batch sent while the plugin maps the one before.
		inst, err = pluginhost.Launch(context.Background(),
			pluginhost.Spec{Name: acpv2.Name, Builtin: true, Path: acptap}, nil)
		if err != nil {
			b.Fatal(err)
		}
		t0 = time.Now()
		if n := mapAllPipelined(b, inst.Mapper, frames, batch); n != outs {
			b.Fatalf("process, pipelined: %d outputs, in process %d", n, outs)
		}
		tPipe += time.Since(t0)
		inst.Kill()

		dirs, lines := sessionLines(framesTurns)
		t0 = time.Now()
		fb := pluginwire.NewFrameBuilder()
		buf := make([]sdk.Frame, 0, batch)
		for i, l := range lines {
			if len(buf) == batch {
				buf = buf[:0]
			}
			buf = fb.Line(buf, uint64(i+1), dirs[i], t0, l)
		}
		tFB += time.Since(t0)

		w, r := wireRates(b, dirs, lines)
		tWrite, tRead = tWrite+w, tRead+r
	}
	n := float64(len(frames)) * float64(b.N)
	rate := func(d time.Duration) float64 { return n / d.Seconds() }
	b.ReportMetric(float64(len(frames)), "frames/op")
	b.ReportMetric(float64(outs), "outputs/op")
	b.ReportMetric(rate(tIn), "inproc-frames/s")
	b.ReportMetric(rate(tGRPC), "grpc-frames/s")
	b.ReportMetric(rate(tProc), "process-frames/s")
	b.ReportMetric(rate(tProc)/rate(tIn), "ratio")
	b.ReportMetric(rate(tPipe), "pipelined-frames/s")
	b.ReportMetric(rate(tPipe)/rate(tIn), "pipelined-ratio")
	b.ReportMetric(rate(tGRPC)/rate(tIn), "grpc-ratio")
	b.ReportMetric(rate(tFB), "framebuilder-frames/s")
	b.ReportMetric(rate(tWrite), "wirelog-append-frames/s")
	b.ReportMetric(rate(tRead), "wirelog-read-frames/s")
	b.ReportMetric(float64(launch.Milliseconds())/float64(b.N), "launch-ms")
}

// wireRates times appending the lines to a wire log as capture does
// (scrubbed, flushed every 256) and reading them back as a catching-up
// feeder does.
func wireRates(b *testing.B, dirs []sdk.Direction, lines [][]byte) (write, read time.Duration) {
	b.Helper()
	dir, err := os.MkdirTemp(tmpRoot, "wire-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "wire.jsonl")
	t0 := time.Now()
	w, err := wire.Create(path, wire.Header{Connection: "c-bench", StartedAt: t0})
	if err != nil {
		b.Fatal(err)
	}
	for i, l := range lines {
		line, _ := wire.Scrub(l)
		if _, err := w.Append(wire.Entry{Type: wire.TypeFrame, At: t0, Dir: dirs[i], Line: line}); err != nil {
			b.Fatal(err)
		}
		if i%256 == 255 {
			w.Flush()
		}
	}
	if err := w.Close(); err != nil { // Close also fsyncs, as acptap does once at the end
		b.Fatal(err)
	}
	write = time.Since(t0)
	t0 = time.Now()
	r, err := wire.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for {
		if _, err := r.Next(); err != nil {
			break
		}
		n++
	}
	r.Close()
	read = time.Since(t0)
	if n != len(lines) {
		b.Fatalf("read %d wire entries back, wrote %d", n, len(lines))
	}
	return write, read
}
