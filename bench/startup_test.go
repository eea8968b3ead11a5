package bench

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkRecordStartup measures how long `acptap record` takes to get the
// agent going: from just before this process forks the command to the
// agent's first instruction (the agent prints the wall clock first thing),
// for the agent started directly and as `acptap record --store <tmp> --
// agent`, alternating, ACPTAP_BENCH_START_N times each after 3 warm-ups.
// The difference is the time acptap spends before the agent's exec (its own
// exec and runtime start, flags, config); the agent's own start cancels out.
func BenchmarkRecordStartup(b *testing.B) {
	acptap, agent := binaries(b)
	n := envInt("ACPTAP_BENCH_START_N", 40)
	var direct, tapped, exits []time.Duration
	for b.Loop() {
		for i := -3; i < n; i++ {
			d := startStamp(b, os.Environ(), agent, "stamp")
			dir, err := os.MkdirTemp(tmpRoot, "start-")
			if err != nil {
				b.Fatal(err)
			}
			t0 := time.Now()
			p := startProc(b, recordEnv(dir), recordArgv(acptap, filepath.Join(dir, "store"), agent, "stamp")...)
			_, at := stampOf(b, p.stderr, "stamp")
			p.stdin.Close()
			if err := p.cmd.Wait(); err != nil {
				b.Fatalf("acptap: %v\n%s", err, p.stderr.all())
			}
			p.stdout.Close()
			if i >= 0 {
				direct = append(direct, d)
				tapped = append(tapped, at.Sub(t0))
				exits = append(exits, time.Since(t0))
			}
		}
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(percentile(direct, 50)), "direct-p50-ms")
	b.ReportMetric(ms(percentile(tapped, 50)), "acptap-p50-ms")
	b.ReportMetric(ms(percentile(tapped, 90)), "acptap-p90-ms")
	b.ReportMetric(ms(percentile(tapped, 50)-percentile(direct, 50)), "added-p50-ms")
	b.ReportMetric(ms(percentile(tapped, 90)-percentile(direct, 90)), "added-p90-ms")
	b.ReportMetric(ms(percentile(exits, 50)), "acptap-exit-p50-ms")
}

// startStamp runs the stamp agent directly and returns fork → first instruction.
func startStamp(b *testing.B, env []string, argv ...string) time.Duration {
	t0 := time.Now()
	p := startProc(b, env, argv...)
	_, at := stampOf(b, p.stderr, "stamp")
	p.stdin.Close()
	if err := p.cmd.Wait(); err != nil {
		b.Fatal(err)
	}
	p.stdout.Close()
	return at.Sub(t0)
}
