package bench

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
	batch := envInt("ACPTAP_BENCH_PLUGIN_BATCH", 256) // frames per batch (the host's BatchFrames default)
	runs := pluginRuns()
	var tIn, tGRPC, tProc, tPipe, tNice, tFB, tWrite, tRead, launch time.Duration
	var tProcV1, tPipeV1, tNicePipe, cpuIn time.Duration
	var cpuProc, cpuPipe, cpuNice, cpuProcV1, cpuPipeV1, cpuNicePipe cpuSplit
	outs := 0
	for b.Loop() {
		t0, h0 := time.Now(), selfCPU()
		outs = mapAll(b, acpv2.New(), frames, batch)
		if runs["inproc"] {
			tIn += time.Since(t0)
			cpuIn += selfCPU() - h0
		}

		if runs["grpc"] {
			dir, err := os.MkdirTemp(tmpRoot, "grpc-")
			if err != nil {
				b.Fatal(err)
			}
			m, stop, err := pluginwire.ServeInProcess(acpv2.New(), dir)
			if err != nil {
				b.Fatal(err)
			}
			t0 := time.Now()
			if n := mapAll(b, m, frames, batch); n != outs {
				b.Fatalf("grpc: %d outputs, in process %d", n, outs)
			}
			tGRPC += time.Since(t0)
			stop()
		}

		// One plugin process, mapped one batch at a time (as record's feeders do) or
		// with two batches in flight (as the host drives it offline: rebuild, convert,
		// the finisher), at the host's CPU priority or at record's lower one (nice).
		proc := func(name string, lower, pipelined, v1 bool, d *time.Duration, cpu *cpuSplit) {
			defer pluginwire.SetPacked(pluginwire.SetPacked(!v1))
			t0 := time.Now()
			launchFn := pluginhost.Launch
			if lower {
				launchFn = pluginhost.LaunchBackground
			}
			inst, err := launchFn(context.Background(),
				pluginhost.Spec{Name: acpv2.Name, Builtin: true, Path: acptap}, nil)
			if err != nil {
				b.Fatal(err)
			}
			launch += time.Since(t0)
			h0, p0 := selfCPU(), procCPU(inst.Pid())
			hs0, ps0 := procSyscalls(os.Getpid()), procSyscalls(inst.Pid())
			t0 = time.Now()
			var n int
			if pipelined {
				n = mapAllPipelined(b, inst.Mapper, frames, batch)
			} else {
				n = mapAll(b, inst.Mapper, frames, batch)
			}
			*d += time.Since(t0)
			cpu.host += selfCPU() - h0
			cpu.plugin += procCPU(inst.Pid()) - p0
			cpu.hostSys += procSyscalls(os.Getpid()) - hs0
			cpu.pluginSys += procSyscalls(inst.Pid()) - ps0
			if n != outs {
				b.Fatalf("%s: %d outputs, in process %d", name, n, outs)
			}
			inst.Kill()
		}
		if runs["process"] {
			proc("process", false, false, false, &tProc, &cpuProc)
		}
		if runs["pipelined"] {
			proc("process, pipelined", false, true, false, &tPipe, &cpuPipe)
		}
		if runs["nice"] {
			proc("process at nice 10", true, false, false, &tNice, &cpuNice)
		}
		if runs["v1"] { // the same process runs, batches sent as wire version 1's Frame messages
			proc("process, v1 framing", false, false, true, &tProcV1, &cpuProcV1)
			proc("process, pipelined, v1 framing", false, true, true, &tPipeV1, &cpuPipeV1)
		}
		if runs["nicepipe"] {
			proc("process at nice 10, pipelined", true, true, false, &tNicePipe, &cpuNicePipe)
		}

		if runs["host"] {
			dirs, lines := sessionLines(framesTurns)
			t0 := time.Now()
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
	}
	n := float64(len(frames)) * float64(b.N)
	rate := func(d time.Duration) float64 { return n / d.Seconds() }
	perFrame := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / n }
	report := func(d time.Duration, unit string) {
		if d > 0 {
			b.ReportMetric(rate(d), unit)
		}
	}
	b.ReportMetric(float64(len(frames)), "frames/op")
	b.ReportMetric(float64(outs), "outputs/op")
	report(tIn, "inproc-frames/s")
	if tIn > 0 {
		b.ReportMetric(perFrame(cpuIn), "inproc-cpu-ns/frame")
	}
	report(tGRPC, "grpc-frames/s")
	if tProc > 0 && tIn > 0 {
		b.ReportMetric(rate(tProc)/rate(tIn), "ratio") // process-ratio under its name of before
	}
	cpuMetrics := func(d time.Duration, c cpuSplit, name string) {
		if d > 0 {
			b.ReportMetric(rate(d), name+"-frames/s")
			if tIn > 0 {
				b.ReportMetric(rate(d)/rate(tIn), name+"-ratio")
			}
			b.ReportMetric(perFrame(c.host), name+"-host-cpu-ns/frame")
			b.ReportMetric(perFrame(c.plugin), name+"-plugin-cpu-ns/frame")
			batches := float64(b.N) * float64((len(frames)+batch-1)/batch)
			b.ReportMetric(float64(c.hostSys)/batches, name+"-host-syscalls/batch")
			b.ReportMetric(float64(c.pluginSys)/batches, name+"-plugin-syscalls/batch")
		}
	}
	cpuMetrics(tProc, cpuProc, "process")
	cpuMetrics(tPipe, cpuPipe, "pipelined")
	cpuMetrics(tProcV1, cpuProcV1, "process-v1")
	cpuMetrics(tPipeV1, cpuPipeV1, "pipelined-v1")
	cpuMetrics(tNicePipe, cpuNicePipe, "nicepipe")
	cpuMetrics(tNice, cpuNice, "nice")
	if tGRPC > 0 && tIn > 0 {
		b.ReportMetric(rate(tGRPC)/rate(tIn), "grpc-ratio")
	}
	report(tFB, "framebuilder-frames/s")
	report(tWrite, "wirelog-append-frames/s")
	report(tRead, "wirelog-read-frames/s")
	b.ReportMetric(float64(launch.Milliseconds())/float64(b.N), "launch-ms")
}

// pluginRuns is the set of BenchmarkPluginFrames's runs to make: all of them
// (inproc grpc process pipelined host) unless ACPTAP_BENCH_PLUGIN_RUNS names
// some, comma-separated ("nice" too: the process at record's lower CPU
// priority; "nicepipe" the same pipelined; "v1" the process runs with the
// batches sent as wire version 1's Frame messages, the framing before
// pluginwire.FeaturePacked). The in-process run is always made (it checks the output count)
// but only timed when named.
func pluginRuns() map[string]bool {
	v := os.Getenv("ACPTAP_BENCH_PLUGIN_RUNS")
	if v == "" {
		v = "inproc,grpc,process,pipelined,host"
	}
	m := map[string]bool{}
	for _, r := range strings.Split(v, ",") {
		m[strings.TrimSpace(r)] = true
	}
	return m
}

// cpuSplit is the CPU time of a run: this process (the host's side) and the
// plugin process.
type cpuSplit struct {
	host, plugin       time.Duration
	hostSys, pluginSys int64 // read and write system calls (/proc/PID/io)
}

// procSyscalls is a process's read and write system calls so far
// (/proc/PID/io syscr + syscw), 0 when unknown.
func procSyscalls(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0
	}
	var n int64
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok && (k == "syscr" || k == "syscw") {
			x, _ := strconv.ParseInt(v, 10, 64)
			n += x
		}
	}
	return n
}

// selfCPU is this process's user+system CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procCPU is a process's user+system CPU time so far (/proc/PID/stat, in
// clock ticks of 10 ms), 0 when unknown.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil || pid <= 0 {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * 10 * time.Millisecond
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
