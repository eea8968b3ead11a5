package ship

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/acptap/acptap/internal/natstest"
)

// benchLine is about the size of an ASR message record.
var benchLine = []byte(`{"seq":1,"id":"01J0000000000000000000000","type":"message","ts":"2026-12-01T10:00:00Z","tsSource":"observed","data":{"role":"assistant","content":[{"type":"text","text":"` + strings.Repeat("lorem ipsum ", 25) + `"}]}}` + "\n")

func writeBenchStore(b *testing.B, root string, lines int) int64 {
	b.Helper()
	dir := filepath.Join(root, "sessions", "bench")
	os.MkdirAll(dir, 0o700)
	data := slices.Repeat(benchLine, lines)
	if err := os.WriteFile(filepath.Join(dir, "stream.asr.jsonl"), data, 0o600); err != nil {
		b.Fatal(err)
	}
	return int64(len(data))
}

// BenchmarkShip: lines/s one pass publishes, against the same bytes
// published raw (async, one message per 256 KiB, no checks) in the same
// run: the ratio is what the exactly-once checks cost.
func BenchmarkShip(b *testing.B) {
	const lines = 100_000
	srv := natstest.Start(b)
	cfg := natsConfig(srv.URL())
	ctx := context.Background()
	var shipDur, rawDur time.Duration
	for i := 0; i < b.N; i++ {
		root := b.TempDir()
		size := writeBenchStore(b, root, lines)
		conn, err := Connect(ctx, cfg, "bench")
		if err != nil {
			b.Fatal(err)
		}
		sh := &Shipper{Root: root, Origin: fmt.Sprintf("o%d", i), Prefix: cfg.Subject, Conn: conn}
		t0 := time.Now()
		st, err := sh.Pass(ctx)
		shipDur += time.Since(t0)
		if err != nil || st.Lines != lines {
			b.Fatalf("%+v %v", st, err)
		}
		// Baseline: the same chunks, published without waiting per chunk.
		data := slices.Repeat(benchLine, lines)
		t0 = time.Now()
		var futs []jetstream.PubAckFuture
		for off := 0; off < len(data); off += DefaultChunkBytes {
			m := nats.NewMsg(fmt.Sprintf("acptap.raw%d.x", i))
			m.Data = data[off:min(off+DefaultChunkBytes, len(data))]
			f, err := conn.JS.PublishMsgAsync(m)
			if err != nil {
				b.Fatal(err)
			}
			futs = append(futs, f)
		}
		for _, f := range futs {
			select {
			case <-f.Ok():
			case err := <-f.Err():
				b.Fatal(err)
			}
		}
		rawDur += time.Since(t0)
		conn.Close()
		b.SetBytes(size)
	}
	b.ReportMetric(float64(lines*b.N)/shipDur.Seconds(), "lines/s")
	b.ReportMetric(rawDur.Seconds()/shipDur.Seconds(), "x_raw_publish")
}

// BenchmarkCollect: lines/s a collector writes into the central store,
// against reading the same messages from the same consumer kind and
// acknowledging them without writing.
func BenchmarkCollect(b *testing.B) {
	const lines = 100_000
	srv := natstest.Start(b)
	cfg := natsConfig(srv.URL())
	ctx := context.Background()
	root := b.TempDir()
	writeBenchStore(b, root, lines)
	conn, err := Connect(ctx, cfg, "bench")
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	sh := &Shipper{Root: root, Origin: "o", Prefix: cfg.Subject, Conn: conn, ChunkBytes: 16 << 10}
	if _, err := sh.Pass(ctx); err != nil {
		b.Fatal(err)
	}
	var colDur, rawDur time.Duration
	for i := 0; i < b.N; i++ {
		c := &Collector{Root: b.TempDir(), Prefix: cfg.Subject, Durable: fmt.Sprintf("c%d", i), Conn: conn}
		t0 := time.Now()
		if err := c.RunUntilCaughtUp(ctx); err != nil {
			b.Fatal(err)
		}
		colDur += time.Since(t0)
		if got := c.Stats()["lines"]; got != lines {
			b.Fatalf("collected %d lines", got)
		}
		cons, err := conn.Stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: fmt.Sprintf("raw%d", i),
			AckPolicy: jetstream.AckExplicitPolicy, FilterSubject: cfg.Subject + ".>"})
		if err != nil {
			b.Fatal(err)
		}
		info, _ := cons.Info(ctx)
		n := info.NumPending
		t0 = time.Now()
		it, _ := cons.Messages(jetstream.PullMaxMessages(256))
		for k := uint64(0); k < n; k++ {
			m, err := it.Next()
			if err != nil {
				b.Fatal(err)
			}
			m.Ack()
		}
		it.Stop()
		rawDur += time.Since(t0)
	}
	b.ReportMetric(float64(lines*b.N)/colDur.Seconds(), "lines/s")
	b.ReportMetric(rawDur.Seconds()/colDur.Seconds(), "x_raw_consume")
}

// BenchmarkLag: a recording appends 200 lines/s (a busy agent); a follower
// ships every 100 ms and a collector runs: the time from a line's append to
// its arrival in the central store, p50 and p99.
func BenchmarkLag(b *testing.B) {
	srv := natstest.Start(b)
	cfg := natsConfig(srv.URL())
	cfg.Interval = 100 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	root, central := b.TempDir(), b.TempDir()
	os.MkdirAll(filepath.Join(root, "sessions", "lag"), 0o700)
	local := filepath.Join(root, "sessions", "lag", "stream.asr.jsonl")
	remote := filepath.Join(central, "o", "sessions", "lag", "stream.asr.jsonl")
	conn, err := Connect(ctx, cfg, "bench")
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	go Follow(ctx, FollowOptions{Interval: cfg.Interval, Parent: os.Getppid(),
		Connect: func(context.Context) (*Shipper, error) {
			return &Shipper{Root: root, Origin: "o", Prefix: cfg.Subject, Conn: conn}, nil
		}})
	col := &Collector{Root: central, Prefix: cfg.Subject, Durable: "lag", Conn: conn}
	go col.Run(ctx)
	f, err := os.OpenFile(local, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	n := 200 * max(b.N, 5) // at least 5 s of lines
	var lags []time.Duration
	var size int64
	for i := 0; i < n; i++ {
		f.Write(benchLine)
		size += int64(len(benchLine))
		t0 := time.Now()
		// Sample every 20th line: wait for it to arrive (the writer pauses
		// meanwhile, so the rate is at most 200 lines/s).
		if i%20 == 0 {
			for {
				if fi, err := os.Stat(remote); err == nil && fi.Size() >= size {
					break
				}
				time.Sleep(time.Millisecond)
			}
			lags = append(lags, time.Since(t0))
		}
		time.Sleep(5 * time.Millisecond)
	}
	slices.Sort(lags)
	b.ReportMetric(float64(lags[len(lags)/2].Microseconds())/1000, "p50_ms")
	b.ReportMetric(float64(lags[len(lags)*99/100].Microseconds())/1000, "p99_ms")
}
