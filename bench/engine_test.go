package bench

import (
	"testing"
	"time"

	"github.com/acptap/acptap/plugins/acpv2"
	"github.com/acptap/acptap/plugins/aep"
	"github.com/acptap/acptap/sdk"
)

// BenchmarkEngines maps the session of BenchmarkPluginFrames in process
// through each default plugin's mapper alone (acpv2: the ASR engine with
// the schema check on, as configured by default; aep), in batches of 256,
// for profiling the per-frame work (-cpuprofile) without gRPC or a process.
func BenchmarkEngines(b *testing.B) {
	frames := benchFrames()
	for _, m := range []struct {
		name string
		new  func() sdk.Mapper
	}{{"acpv2", acpv2.New}, {"aep", aep.New}} {
		b.Run(m.name, func(b *testing.B) {
			var t time.Duration
			for b.Loop() {
				t0 := time.Now()
				mapAll(b, m.new(), frames, 256)
				t += time.Since(t0)
			}
			b.ReportMetric(float64(len(frames))*float64(b.N)/t.Seconds(), "frames/s")
		})
	}
}
