//go:build linux

package finisher

import (
	"testing"
	"time"

	"github.com/acptap/acptap/host/captured"
	"github.com/acptap/acptap/sdk"
)

// BenchmarkSpool times what the exit costs per MiB of backlog: the tee's queued reads
// (64 KiB each, as the tee queues a bulk flow) written into a fresh memfd spool.
func BenchmarkSpool(b *testing.B) {
	const reads = 512 // 32 MiB
	data := make([]byte, captured.BufferSize)
	for i := range data {
		data[i] = 'x'
		if i%300 == 299 {
			data[i] = '\n'
		}
	}
	b.SetBytes(reads * captured.BufferSize)
	for b.Loop() {
		q := make(chan captured.Item, reads)
		for range reads {
			q <- captured.Item{Dir: sdk.A2C, At: time.Now(), Chunk: &captured.Chunk{Data: data}}
		}
		close(q)
		f, err := NewSpool()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := captured.WriteSpool(f, captured.SpoolHeader{}, q, nil); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

// BenchmarkSpoolFloor is the floor under BenchmarkSpool: one write of the same bytes into
// a fresh memfd (the kernel's page allocation and copy).
func BenchmarkSpoolFloor(b *testing.B) {
	data := make([]byte, 512*captured.BufferSize)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		f, err := NewSpool()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.Write(data); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}
