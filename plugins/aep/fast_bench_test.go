//go:build unix

package aep

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/acptap/acptap/sdk"
)

// BenchmarkFastPath maps the synthetic session (v2, deltas off) both ways
// in each op, alternately, timed in process CPU time (getrusage: GC
// included, and less at the mercy of a loaded machine than wall time):
// slow-frames/s is the map-based path alone (the fast path off), frames/s
// the plugin as it runs; speedup = slow time / fast time.
//
//	go test ./plugins/aep/ -run '^$' -bench FastPath -benchtime 5x
func BenchmarkFastPath(b *testing.B) {
	g := newSynthetic(true)
	frames := append([]sdk.Frame(nil), g.frames...)
	for range 2000 {
		frames = append(frames, g.next()...)
	}
	frames = append(frames, g.close()...)
	ctx := context.Background()
	var tSlow, tFast float64
	for b.Loop() {
		for _, slow := range []bool{true, false} {
			c := syntheticConn(b, true, false)
			c.slowOnly = slow
			fs := append([]sdk.Frame(nil), frames...) // no head cached by the other run
			t0 := cpuTime()
			for i := 0; i < len(fs); i += 256 {
				if _, err := c.Map(ctx, fs[i:min(i+256, len(fs))]); err != nil {
					b.Fatal(err)
				}
			}
			d := (cpuTime() - t0).Seconds()
			if slow {
				tSlow += d
			} else {
				tFast += d
			}
		}
	}
	n := float64(len(frames)) * float64(b.N)
	b.ReportMetric(n/tFast, "frames/s")
	b.ReportMetric(n/tSlow, "slow-frames/s")
	b.ReportMetric(tSlow/tFast, "speedup")
}

// cpuTime is the process's CPU time so far (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
