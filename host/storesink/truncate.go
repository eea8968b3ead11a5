package storesink

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

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
	r := bufio.NewReaderSize(f, 1<<16)
	var off int64
	for lines := 0; lines < n; {
		b, err := r.ReadSlice('\n')
		off += int64(len(b))
		switch {
		case err == nil:
			lines++
		case errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			log.Warn("the stream has fewer lines than the finished connection started with; continuing it", "file", path, "want", n, "have", lines)
			return nil
		default:
			return fmt.Errorf("truncate %s: %w", path, err)
		}
	}
	if err := f.Truncate(off); err != nil {
		return fmt.Errorf("truncate %s: %w", path, err)
	}
	return nil
}
