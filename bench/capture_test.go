package bench

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/acptap/acptap/bench/internal/acpgen"
	"github.com/acptap/acptap/host/pipeline"
	"github.com/acptap/acptap/host/tee"
	"github.com/acptap/acptap/sdk"
)

// BenchmarkCaptureDrain times what record's exit waits for when the agent
// has exited with a backlog in the tee's queue: the pipeline's capture
// writing ACPTAP_BENCH_EXIT_MIB MiB of queued session/update reads (64 KiB
// each, as the tee queues them) to a new wire log, in process, with no
// plugin attached (a behind mapping is handed over; its feeders are
// stopped at the agent's exit). MB/s of queued bytes.
func BenchmarkCaptureDrain(b *testing.B) {
	size := int64(envInt("ACPTAP_BENCH_EXIT_MIB", 8)) << 20
	s := acpgen.NewStream()
	data := append(append(append([]byte{}, acpgen.InitializeRequest...), acpgen.NewSessionRequest...), acpgen.PromptRequest...)
	for first, n := 0, s.TurnsFor(size); first < n; first += acpgen.BlockTurns {
		data = append(data, s.Block(first, min(acpgen.BlockTurns, n-first))...)
	}
	dir := b.TempDir()
	b.SetBytes(int64(len(data)))
	for i := 0; b.Loop(); i++ {
		q := make(chan tee.Item, len(data)/(64<<10)+2)
		for off := 0; off < len(data); off += 64 << 10 {
			q <- tee.Item{Dir: sdk.A2C, At: time.Now(), Chunk: &tee.Chunk{Data: data[off:min(off+64<<10, len(data))]}}
		}
		close(q)
		p := pipeline.New(pipeline.Options{WirePath: filepath.Join(dir, "w", string(rune('a'+i%26)), time.Now().Format("150405.000000000")+".jsonl"),
			Connection: "c", Mode: sdk.ModeRecord, Revisions: map[string][]string{}, Sink: nopSink{}})
		if err := p.Start(context.Background(), q); err != nil {
			b.Fatal(err)
		}
		<-p.CaptureDone()
		b.StopTimer()
		if err := p.CloseWireNoSync(); err != nil {
			b.Fatal(err)
		}
		if _, err := p.Wait(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

type nopSink struct{}

func (nopSink) Output(string, bool, sdk.Output)  {}
func (nopSink) Gap(string, bool, uint64, string) {}
