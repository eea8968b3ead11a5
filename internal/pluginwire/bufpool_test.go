package pluginwire

import "testing"

// TestBufferPool: Get returns the length asked for, in a buffer of the
// tier's capacity (the smallest power of two from 256 B that holds it),
// reused after Put; lengths above the largest tier and foreign buffers are
// not pooled.
func TestBufferPool(t *testing.T) {
	p := new(bufferPool)
	for _, n := range []int{0, 1, 255, 256, 257, 4095, 4096, 4097, 80_000, 1 << 20, 1<<maxPooledShift - 1, 1 << maxPooledShift} {
		b := p.Get(n)
		if len(*b) != n {
			t.Fatalf("Get(%d): len %d", n, len(*b))
		}
		want := 1 << minPooledShift
		for want < n {
			want <<= 1
		}
		if cap(*b) != want {
			t.Fatalf("Get(%d): cap %d, want %d", n, cap(*b), want)
		}
		for i := range *b {
			(*b)[i] = 0xAA
		}
		p.Put(b)
		c := p.Get(n)
		if len(*c) != n || cap(*c) != want {
			t.Fatalf("Get(%d) after Put: len %d cap %d", n, len(*c), cap(*c))
		}
	}
	big := p.Get(1<<maxPooledShift + 1)
	if len(*big) != 1<<maxPooledShift+1 {
		t.Fatalf("large Get: len %d", len(*big))
	}
	p.Put(big) // dropped, not pooled
	odd := make([]byte, 10, 1000)
	p.Put(&odd) // not a tier's capacity: dropped
	if b := p.Get(1000); cap(*b) != 1024 {
		t.Fatalf("Get(1000) after a foreign Put: cap %d", cap(*b))
	}
}
