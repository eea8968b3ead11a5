package acpasr

import (
	"context"
	"testing"

	"github.com/acptap/acptap/sdk"
)

// BenchmarkSchemaCheck maps the synthetic session of BenchmarkMemory1MUpdates
// (2,000 turns, 46k frames) with the schema check on (the default) and off,
// and reports frames/s of each.
//
//	go test ./plugins/internal/acpasr/ -run '^$' -bench SchemaCheck -benchtime 5x
func BenchmarkSchemaCheck(b *testing.B) {
	const turns = 2000
	g := newSynthetic()
	batches := [][]sdk.Frame{append([]sdk.Frame(nil), g.frames...)}
	n := len(g.frames)
	for range turns {
		f := append([]sdk.Frame(nil), g.next()...)
		batches = append(batches, f)
		n += len(f)
	}
	for _, v := range []struct{ name, config string }{{"on", ""}, {"off", `{"checkSchema":false}`}} {
		b.Run(v.name, func(b *testing.B) {
			cfg, err := ParseConfig([]byte(v.config))
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			for b.Loop() {
				c := NewSession(testOptions(cfg), startReq("")).c
				for _, fs := range batches {
					outs, err := c.Map(ctx, fs)
					if err != nil {
						b.Fatal(err)
					}
					for _, o := range outs {
						if o.Kind == sdk.Diagnostic {
							b.Fatalf("diagnostic: %s: %s", o.Summary, o.Detail)
						}
					}
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "frames/s")
		})
	}
}
