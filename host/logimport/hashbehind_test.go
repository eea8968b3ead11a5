package logimport

import (
	"bytes"
	"crypto/sha256"
	"math/rand/v2"
	"testing"
)

// TestHashBehind: the digest hashBehind computes on its goroutine is
// sha256's of the same bytes, written in pieces of any size (none, less
// than a block, several blocks at once), and the written slice may be
// reused at once.
func TestHashBehind(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, total := range []int{0, 1, hashBlock - 1, hashBlock, hashBlock + 1, 5*hashBlock + 17} {
		data := make([]byte, total)
		for i := range data {
			data[i] = byte(r.IntN(256))
		}
		h := newHashBehind()
		scratch := make([]byte, 3*hashBlock)
		for off := 0; off < total; {
			n := min(total-off, r.IntN(3*hashBlock)+1)
			copy(scratch, data[off:off+n])
			h.Write(scratch[:n])
			for i := range scratch[:n] {
				scratch[i] = 0 // reused by the caller
			}
			off += n
		}
		want := sha256.Sum256(data)
		if got := h.sum(); !bytes.Equal(got, want[:]) {
			t.Errorf("%d bytes: %x, want %x", total, got, want)
		}
		h.stop() // after sum: nothing
	}
	newHashBehind().stop() // never summed: the goroutine ends
}
