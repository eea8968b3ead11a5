package jsonl

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"testing"
)

// benchInput is 64 MiB of 311-byte lines (the acpgen update's average) and
// one of 3 MiB (a long line across blocks) every 8 MiB.
func benchInput() []byte {
	var b bytes.Buffer
	line := strings.Repeat("x", 311) + "\n"
	long := strings.Repeat("y", 3<<20) + "\n"
	for b.Len() < 64<<20 {
		for i := 0; i < (8<<20)/len(line); i++ {
			b.WriteString(line)
		}
		b.WriteString(long)
	}
	return b.Bytes()
}

// BenchmarkReader reads the input with Reader.Next, against a bare
// bufio.Reader.ReadSlice loop that copies each line into one reused buffer
// (about what the wire log's reader did before). Next allocates a long
// line's blocks anew each time (an endless line costs its bound, not its
// bound and a copy); short lines cost neither a copy nor an allocation.
func BenchmarkReader(b *testing.B) {
	in := benchInput()
	b.Run("jsonl", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		for b.Loop() {
			r := NewReader(bytes.NewReader(in), 0)
			for {
				if _, err := r.Next(); err != nil {
					if err != io.EOF {
						b.Fatal(err)
					}
					break
				}
			}
		}
	})
	b.Run("readslice", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		var buf []byte
		for b.Loop() {
			br := bufio.NewReaderSize(bytes.NewReader(in), bufSize)
			for {
				chunk, err := br.ReadSlice('\n')
				buf = append(buf[:0], chunk...)
				if err == bufio.ErrBufferFull {
					continue
				}
				if err != nil {
					break
				}
			}
		}
	})
}
