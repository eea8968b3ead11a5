package otlp

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/acptap/acptap/host/otlp/spool"
	"github.com/acptap/acptap/internal/otlpcollector"
	"github.com/acptap/acptap/sdk/aep"
)

// BenchmarkProject: AEP event lines → encoded log records and spans.
func BenchmarkProject(b *testing.B) {
	lines := goldenLines(b)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		p := NewProjector(aep.Metadata, "bench", nil)
		for _, l := range lines {
			if _, err := p.Project(l); err != nil {
				b.Fatal(err)
			}
			n++
		}
		p.Flush()
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkSpoolAndDeliver: the golden fixture spooled (synced segments)
// and delivered to the in-process collector receiver, per protocol.
func BenchmarkSpoolAndDeliver(b *testing.B) {
	lines := goldenLines(b)
	for _, protocol := range []string{ProtocolGRPC, ProtocolHTTP} {
		b.Run(protocol, func(b *testing.B) {
			c := otlpcollector.Start(b)
			addr := c.HTTPAddr
			if protocol == ProtocolGRPC {
				addr = c.GRPCAddr
			}
			l, tr, _ := Endpoints(Settings{Endpoint: "http://" + addr, Protocol: protocol}, func(string) string { return "" })
			cl, err := NewClient(l, tr)
			if err != nil {
				b.Fatal(err)
			}
			defer cl.Close()
			sp, _ := spool.Open(filepath.Join(b.TempDir(), "spool"), 0)
			n := 0
			for b.Loop() {
				p := NewProjector(aep.Metadata, "bench", nil)
				var items []spool.Item
				for _, line := range lines {
					its, _ := p.Project(line)
					items = append(items, its...)
					n++
				}
				if _, err := sp.Append(items); err != nil {
					b.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				if err := (&Sender{Spool: sp, Client: cl}).Run(ctx, true); err != nil {
					b.Fatal(err)
				}
				cancel()
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
