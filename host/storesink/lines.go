package storesink

import (
	"fmt"
	"io"
	"os"

	"github.com/acptap/acptap/internal/jsonl"
	"github.com/acptap/acptap/internal/private"
)

// countLines counts the LF-terminated lines of a file.
func countLines(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, _, _, err := jsonl.Count(f)
	return n, err
}

// copyLines writes the first n LF-terminated lines of src to a new file dst
// (mode 0600).
func copyLines(src, dst string, n int) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copy prior lines: %w", err)
	}
	defer in.Close()
	end, _, err := jsonl.Prefix(in, n)
	if err != nil {
		return fmt.Errorf("copy prior lines: %w", err)
	}
	out, err := private.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return fmt.Errorf("copy prior lines: %w", err)
	}
	if _, err := io.Copy(out, io.NewSectionReader(in, 0, end)); err != nil {
		out.Close()
		return fmt.Errorf("copy prior lines: %w", err)
	}
	return out.Close()
}
