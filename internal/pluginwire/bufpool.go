package pluginwire

import (
	"math/bits"
	"sync"

	"google.golang.org/grpc/mem"
)

// bufferPool is the buffer pool gRPC takes its message and frame buffers
// from on both ends of a plugin connection (experimental.BufferPool,
// experimental.WithBufferPool).
//
// gRPC's default pool has tiers of 256 B, 4, 16 and 32 KiB and 1 MiB, and
// clears every buffer it hands out: a batch of 256 frames (~80 KB) was
// received into a 1 MiB buffer, cleared first — 0.3 µs of the plugin's CPU
// a frame, ~5 % of it (the profile of BenchmarkPluginFrames's plugin). This
// pool has a tier for every power of two from 256 B to maxPooled, so a
// message takes at most twice its size, and does not clear: gRPC reads or
// writes exactly the length it asked for before anything reads the buffer
// (the same contract as mem.NopBufferPool's fresh buffers, whose contents
// are never read either). A tier is a sync.Pool, so what the pool keeps is
// released by the collector as the default pool's is; larger buffers are not
// pooled.
type bufferPool struct {
	tiers [maxPooledShift - minPooledShift + 1]sync.Pool
}

const (
	minPooledShift = 8  // 256 B
	maxPooledShift = 22 // 4 MiB
)

var _ mem.BufferPool = (*bufferPool)(nil)

// sharedPool is the pool of every connection of the process.
var sharedPool = new(bufferPool)

// tierOf is the tier of a buffer of n bytes: the smallest power of two at
// least n (at least 256), as an index; -1 when n is above maxPooled.
func tierOf(n int) int {
	if n <= 1<<minPooledShift {
		return 0
	}
	s := bits.Len(uint(n - 1))
	if s > maxPooledShift {
		return -1
	}
	return s - minPooledShift
}

func (p *bufferPool) Get(length int) *[]byte {
	t := tierOf(length)
	if t < 0 {
		b := make([]byte, length)
		return &b
	}
	if v, ok := p.tiers[t].Get().(*[]byte); ok {
		*v = (*v)[:length]
		return v
	}
	b := make([]byte, length, 1<<(t+minPooledShift))
	return &b
}

func (p *bufferPool) Put(b *[]byte) {
	c := cap(*b)
	t := tierOf(c)
	if t < 0 || c != 1<<(t+minPooledShift) {
		return // not one of the pool's (or above the largest tier)
	}
	*b = (*b)[:0]
	p.tiers[t].Put(b)
}
