package storesink

import (
	"bufio"
	"fmt"
	"io"
	"os"
)

// countLines counts the LF-terminated lines of a file.
func countLines(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<16)
	n := 0
	for {
		_, err := r.ReadSlice('\n')
		switch err {
		case nil:
			n++
		case bufio.ErrBufferFull:
		case io.EOF:
			return n, nil
		default:
			return n, err
		}
	}
}

// copyLines writes the first n LF-terminated lines of src to a new file dst
// (mode 0600).
func copyLines(src, dst string, n int) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copy prior lines: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("copy prior lines: %w", err)
	}
	w := bufio.NewWriterSize(out, 1<<16)
	r := bufio.NewReaderSize(in, 1<<16)
	for i := 0; i < n; {
		chunk, err := r.ReadSlice('\n')
		w.Write(chunk)
		if err == nil {
			i++
			continue
		}
		if err != bufio.ErrBufferFull {
			break
		}
	}
	if err := w.Flush(); err != nil {
		out.Close()
		return fmt.Errorf("copy prior lines: %w", err)
	}
	return out.Close()
}
