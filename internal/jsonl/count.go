package jsonl

import (
	"bytes"
	"errors"
	"io"
)

// Count reads r to its end and counts its committed lines: how many, the
// offset just after the last LF (what the torn-tail rule keeps: bytes past
// it are an unfinished write) and how many bytes r held. It keeps no line,
// so it needs no bound.
func Count(r io.Reader) (lines int, committed, size int64, err error) {
	return scan(r, -1)
}

// Prefix reads r up to its n-th LF: it returns the offset just after it and
// n, or, when r holds fewer committed lines, the offset after the last and
// how many there were.
func Prefix(r io.Reader, n int) (off int64, lines int, err error) {
	if n <= 0 {
		return 0, 0, nil
	}
	lines, off, _, err = scan(r, n)
	return off, lines, err
}

var lf = []byte{'\n'}

// scan counts LFs up to stop (stop < 0: all).
func scan(r io.Reader, stop int) (lines int, committed, size int64, err error) {
	buf := make([]byte, 256<<10)
	for {
		k, rerr := r.Read(buf)
		chunk := buf[:k]
		if stop < 0 { // all of them: count, not walk
			lines += bytes.Count(chunk, lf)
			if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
				committed = size + int64(i) + 1
			}
			chunk = nil
		}
		for len(chunk) > 0 {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				break
			}
			lines++
			committed = size + int64(k-len(chunk)+i) + 1
			if lines == stop {
				return lines, committed, committed, nil
			}
			chunk = chunk[i+1:]
		}
		size += int64(k)
		if errors.Is(rerr, io.EOF) {
			return lines, committed, size, nil
		}
		if rerr != nil {
			return 0, 0, 0, rerr
		}
	}
}
