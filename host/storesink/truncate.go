package storesink

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/acptap/acptap/internal/jsonl"
	hclog "github.com/hashicorp/go-hclog"
)

// truncateLines cuts path, in place, to its first n LF-terminated lines. A
// missing file is left missing; a file with fewer lines is left as it is
// (and said so: something else removed lines the connection continued).
func truncateLines(path string, n int, log hclog.Logger) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("truncate %s: %w", path, err)
	}
	defer f.Close()
	off, lines, err := jsonl.Prefix(f, n)
	if err != nil {
		return fmt.Errorf("truncate %s: %w", path, err)
	}
	if lines < n {
		log.Warn("the stream has fewer lines than the finished connection started with; continuing it", "file", path, "want", n, "have", lines)
		return nil
	}
	if err := f.Truncate(off); err != nil {
		return fmt.Errorf("truncate %s: %w", path, err)
	}
	return nil
}
