package store

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
)

// A writer that gathers lines (SetBuffer) leaves the same bytes and counts
// as one that writes each line at once, through any mix of line sizes
// (under, at and over the buffer, over bigLine), Release, Flush and Sync;
// and what a flush has written is on disk (a reader sees it).
func TestBufferedWriterSameBytes(t *testing.T) {
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 7))
		s, _ := Open(t.TempDir())
		plain, _, err := s.OpenStream("plain")
		if err != nil {
			t.Fatal(err)
		}
		held, _, err := s.OpenStream("held")
		if err != nil {
			t.Fatal(err)
		}
		hold := []int{1, 2, 64, 4 << 10, 64 << 10}[seed%5]
		held.SetBuffer(hold)
		for i := range 300 {
			var n int
			switch r.IntN(150) {
			case 0:
				n = bigLine + 1 + r.IntN(100)
			case 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15:
				n = hold + r.IntN(3) - 1
			default:
				n = 1 + r.IntN(300)
			}
			n = max(n, 1)
			line := bytes.Repeat([]byte{byte('a' + i%26)}, n)
			for _, w := range []*StreamWriter{plain, held} {
				if err := w.WriteLine(line); err != nil {
					t.Fatal(err)
				}
			}
			switch r.IntN(30) {
			case 0:
				held.Release()
				plain.Release()
			case 1:
				if err := held.Flush(); err != nil {
					t.Fatal(err)
				}
				a, _ := os.ReadFile(plain.Path())
				b, _ := os.ReadFile(held.Path())
				if !bytes.Equal(a, b) {
					t.Fatalf("seed %d line %d: after Flush the files differ (%d, %d bytes)", seed, i, len(a), len(b))
				}
			case 2:
				if err := held.Sync(); err != nil {
					t.Fatal(err)
				}
			}
			if plain.Lines() != held.Lines() {
				t.Fatalf("seed %d: Lines %d, %d", seed, plain.Lines(), held.Lines())
			}
		}
		for _, w := range []*StreamWriter{plain, held} {
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		}
		a, _ := os.ReadFile(plain.Path())
		b, _ := os.ReadFile(held.Path())
		if !bytes.Equal(a, b) {
			t.Fatalf("seed %d (buffer %d): the files differ (%d, %d bytes)", seed, hold, len(a), len(b))
		}
		if err := held.WriteLine([]byte("x")); err == nil {
			t.Fatal("WriteLine after Close: no error")
		}
	}
}

// BenchmarkWriteLines writes 10,000 lines of 400 bytes one write each
// (buffer 0) or gathered 64 KiB at a time (a rebuild's staging files).
func BenchmarkWriteLines(b *testing.B) {
	line := bytes.Repeat([]byte("x"), 400)
	for _, hold := range []int{0, 64 << 10} {
		b.Run(map[int]string{0: "each", 64 << 10: "buffered"}[hold], func(b *testing.B) {
			s, _ := Open(b.TempDir())
			for i := 0; b.Loop(); i++ {
				w, _, err := s.OpenStream(fmt.Sprintf("s%d", i))
				if err != nil {
					b.Fatal(err)
				}
				w.SetBuffer(hold)
				for range 10000 {
					if err := w.WriteLine(line); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
