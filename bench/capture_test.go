package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/acptap/acptap/bench/internal/acpgen"
	"github.com/acptap/acptap/host/captured"
	"github.com/acptap/acptap/host/pipeline"
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
	a2c := append(append(append([]byte{}, acpgen.InitializeRequest...), acpgen.NewSessionRequest...), acpgen.PromptRequest...)
	for first, n := 0, s.TurnsFor(size); first < n; first += acpgen.BlockTurns {
		a2c = append(a2c, s.Block(first, min(acpgen.BlockTurns, n-first))...)
	}
	c2a := append(append([]byte{}, acpgen.InitializeRequest...), acpgen.NewSessionRequest...)
	for block := acpgen.MCPBlock(4 << 20); int64(len(c2a)) < size; {
		c2a = append(c2a, block...)
	}
	b.Run("dir=a2c", func(b *testing.B) { drain(b, sdk.A2C, a2c) })
	b.Run("dir=c2a", func(b *testing.B) { drain(b, sdk.C2A, c2a) })
}

// drain is one BenchmarkCaptureDrain run: data queued as 64 KiB reads of
// one direction, then capture to the end of the queue.
func drain(b *testing.B, dir sdk.Direction, data []byte) {
	wdir := b.TempDir()
	b.SetBytes(int64(len(data)))
	for i := 0; b.Loop(); i++ {
		q := make(chan captured.Item, len(data)/(64<<10)+2)
		for off := 0; off < len(data); off += 64 << 10 {
			q <- captured.Item{Dir: dir, At: time.Now(), Chunk: &captured.Chunk{Data: data[off:min(off+64<<10, len(data))]}}
		}
		close(q)
		p := pipeline.New(pipeline.Options{WirePath: filepath.Join(wdir, fmt.Sprintf("%d.jsonl", i)),
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
