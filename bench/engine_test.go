package bench

import (
	"encoding/json"
	"syscall"
	"testing"
	"time"

	"github.com/acptap/acptap/plugins/acpv2"
	"github.com/acptap/acptap/plugins/aep"
	"github.com/acptap/acptap/sdk"
)

// BenchmarkEngines maps the session of BenchmarkPluginFrames in process
// through each default plugin's mapper alone (acpv2: the ASR engine with
// the schema check on, as configured by default; aep), in batches of 256,
// and, alternately in the same op, parses every frame once with
// encoding/json into an any (one plain Go JSON parse, the baseline of "the
// engine at JSON-parse speed"). ratio = parse time / mapping time (≥ 1: the
// mapper at least as fast as one parse). Profile with -cpuprofile: no gRPC,
// no process.
func BenchmarkEngines(b *testing.B) {
	frames := benchFrames()
	for _, m := range []struct {
		name string
		new  func() sdk.Mapper
	}{{"acpv2", acpv2.New}, {"aep", aep.New}} {
		b.Run(m.name, func(b *testing.B) {
			var tMap, tParse, cMap, cParse time.Duration
			for b.Loop() {
				t0, c0 := time.Now(), processCPU()
				mapAll(b, m.new(), frames, 256)
				tMap += time.Since(t0)
				cMap += processCPU() - c0
				t0, c0 = time.Now(), processCPU()
				for i := range frames {
					if frames[i].Kind != sdk.KindLine {
						continue
					}
					var v any
					if err := json.Unmarshal(frames[i].Data, &v); err != nil {
						b.Fatal(err)
					}
				}
				tParse += time.Since(t0)
				cParse += processCPU() - c0
			}
			n := float64(len(frames)) * float64(b.N)
			b.ReportMetric(n/tMap.Seconds(), "frames/s")
			b.ReportMetric(n/tParse.Seconds(), "goparse-frames/s")
			b.ReportMetric(tParse.Seconds()/tMap.Seconds(), "ratio")
			// The same in the process's CPU time (GC included, whichever
			// phase it falls in): steadier than wall time on a shared machine.
			b.ReportMetric(n/cMap.Seconds(), "cpu-frames/s")
			b.ReportMetric(cParse.Seconds()/cMap.Seconds(), "cpu-ratio")
		})
	}
}

// processCPU is the CPU time (user and system) the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkEngineMap is BenchmarkEngines' acpv2 mapping alone (no parse
// alternating with it), for profiles and instruction counts:
//
//	ACPTAP_BENCH_UPDATES=20000 GOGC=off valgrind --tool=cachegrind \
//	  ./bench.test -test.run '^$' -test.bench EngineMap -test.benchtime=1x
func BenchmarkEngineMap(b *testing.B) {
	frames := benchFrames()
	for b.Loop() {
		mapAll(b, acpv2.New(), frames, 256)
	}
	b.ReportMetric(float64(len(frames))*float64(b.N)/b.Elapsed().Seconds(), "frames/s")
}
