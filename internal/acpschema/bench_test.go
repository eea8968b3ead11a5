package acpschema

import (
	"fmt"
	"testing"
)

// BenchmarkCheck checks the agent's frames of the benchmarks' workload
// (testdata/acpgen.frames: handshake responses, 200 session/update
// notifications) with a tolerant v2 checker,
// with the fast path (fast) and without it (slow: encoding/json and
// jsonschema alone, as before the fast path).
//
//	go test ./internal/acpschema -run '^$' -bench Check
func BenchmarkCheck(b *testing.B) {
	var frames []frame
	for _, f := range corpus(b) {
		if f.from == Agent && f.src == "testdata/acpgen.frames" {
			frames = append(frames, f)
		}
	}
	if len(frames) < 200 {
		b.Fatalf("%d frames", len(frames))
	}
	for _, slow := range []bool{false, true} {
		name := "fast"
		if slow {
			name = "slow"
		}
		b.Run(name, func(b *testing.B) {
			c, err := NewChecker(V2)
			if err != nil {
				b.Fatal(err)
			}
			c.slow = slow
			c.SetTolerant(true)
			bytes := 0
			for _, f := range frames {
				bytes += len(f.line)
			}
			b.SetBytes(int64(bytes))
			for b.Loop() {
				for _, f := range frames {
					if err := c.Check(f.from, f.line); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(len(frames))*float64(b.N)/b.Elapsed().Seconds(), "frames/s")
		})
	}
}

// BenchmarkCompile compiles each schema version as a plugin's Warm does
// at its start (the first NewChecker), without the cache.
func BenchmarkCompile(b *testing.B) {
	for _, v := range []Version{V1Unstable, V2} {
		b.Run(fmt.Sprintf("v%d", v), func(b *testing.B) {
			for b.Loop() {
				if _, err := compileSchema(v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
