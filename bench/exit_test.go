package bench

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/acptap/acptap/bench/internal/acpgen"
)

// BenchmarkRecordExit measures what the editor waits for once the agent has
// written its last byte: the time from the editor reading that byte to
// every process having exited, through `acptap record` (acpv2 and aep
// attached, a backlog of ACPTAP_BENCH_EXIT_MIB MiB of session/update lines
// for them to map) and, alternately in the same run, through cat in its
// place. ACPTAP_BENCH_EXIT_N runs of each (default 20); p50 and p99 of each,
// acptap's p99 minus cat's, and how long the mapping went on after acptap
// had exited (the finisher's work, waited for before the next run).
// ACPTAP_BENCH_EXIT_KIB, when set, is the backlog in KiB instead, and
// ACPTAP_BENCH_EXIT_IDLE_MS an idle time after the last byte before the editor
// closes the agent's stdin (the exit is timed from the close): with a small
// backlog (64) and an idle of 500, the mapping has caught up when the agent
// exits, the common end of a session (handed-over-runs 0).
func BenchmarkRecordExit(b *testing.B) {
	size := int64(envInt("ACPTAP_BENCH_EXIT_MIB", 8)) << 20
	if kib := envInt("ACPTAP_BENCH_EXIT_KIB", 0); kib > 0 {
		size = int64(kib) << 10
	}
	runs := envInt("ACPTAP_BENCH_EXIT_N", 20)
	turns := acpgen.NewStream().TurnsFor(size)
	idle := time.Duration(envInt("ACPTAP_BENCH_EXIT_IDLE_MS", 0)) * time.Millisecond
	var cat, tap, mapped, wire []time.Duration
	handed := -countHanded()
	for b.Loop() {
		for range runs {
			cat = append(cat, runA2CIdle(b, viaCat, turns, idle).exit)
			t := runA2CIdle(b, viaAcptap, turns, idle)
			tap, mapped = append(tap, t.exit), append(mapped, t.mapped)
			wire = append(wire, time.Duration(t.rec.WireMS*float64(time.Millisecond)))
		}
	}
	handed += countHanded()
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(float64(size)/(1<<20), "backlog-MiB")
	b.ReportMetric(ms(percentile(cat, 50)), "cat-exit-p50-ms")
	b.ReportMetric(ms(percentile(cat, 99)), "cat-exit-p99-ms")
	b.ReportMetric(ms(percentile(tap, 50)), "acptap-exit-p50-ms")
	b.ReportMetric(ms(percentile(tap, 99)), "acptap-exit-p99-ms")
	b.ReportMetric(ms(percentile(tap, 99)-percentile(cat, 99)), "added-exit-p99-ms")
	b.ReportMetric(ms(percentile(mapped, 50)), "mapped-after-exit-p50-ms")
	b.ReportMetric(ms(percentile(wire, 50)), "wire-after-exit-p50-ms")
	b.ReportMetric(ms(percentile(wire, 99)), "wire-after-exit-p99-ms")
	b.ReportMetric(float64(handed), "handed-over-runs")
	b.ReportMetric(float64(len(tap)), "runs")
}

// countHanded counts the recordings of this run that handed their mapping
// to a finisher.
func countHanded() int {
	n := 0
	logs, _ := filepath.Glob(filepath.Join(tmpRoot, "run-*", "store", "logs", "acptap.log"))
	for _, l := range logs {
		if b, err := os.ReadFile(l); err == nil && bytes.Contains(b, []byte("mapping handed to a finisher")) {
			n++
		}
	}
	return n
}

// BenchmarkRebuild times `acptap rebuild` (acpv2 and aep) of a recorded
// wire log of ACPTAP_BENCH_REBUILD_MIB MiB of session/update lines (default
// 64) against one Python json.loads pass over the same file, alternately;
// ratio is Python's time over rebuild's (≥ 1: rebuild at least as fast).
func BenchmarkRebuild(b *testing.B) {
	acptap, _ := binaries(b)
	py, err := exec.LookPath("python3")
	if err != nil {
		b.Skip("python3 not found: no baseline")
	}
	size := int64(envInt("ACPTAP_BENCH_REBUILD_MIB", 64)) << 20
	runA2C(b, viaAcptap, acpgen.NewStream().TurnsFor(size))
	wires, _ := filepath.Glob(filepath.Join(tmpRoot, "run-*", "store", "wire", "*.jsonl"))
	if len(wires) == 0 {
		b.Fatal("no wire log recorded")
	}
	wire := wires[len(wires)-1]
	fi, _ := os.Stat(wire)
	var pyT, rbT, rbCPU time.Duration
	for b.Loop() {
		t0 := time.Now()
		pyCmd := exec.Command(py, "-c", "import json,sys\nfor l in open(sys.argv[1],'rb'): json.loads(l)", wire)
		if out, err := pyCmd.CombinedOutput(); err != nil {
			b.Fatalf("python: %v\n%s", err, out)
		}
		pyT += time.Since(t0)
		dir, _ := os.MkdirTemp(tmpRoot, "rebuild-")
		cmd := exec.Command(acptap, "rebuild", "--store", filepath.Join(dir, "store"), wire)
		cmd.Env = recordEnv(dir)
		t0 = time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("acptap rebuild: %v\n%s", err, out)
		}
		rbT += time.Since(t0)
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok { // acptap and its plugins (waited for)
			rbCPU += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(fi.Size())/1e6, "wire-MB")
	b.ReportMetric(pyT.Seconds()/n, "python-s")
	b.ReportMetric(rbT.Seconds()/n, "rebuild-s")
	b.ReportMetric(rbCPU.Seconds()/n, "rebuild-cpu-s") // on this shared machine steadier than the wall time
	b.ReportMetric(pyT.Seconds()/rbT.Seconds(), "ratio")
}
