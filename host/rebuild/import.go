package rebuild

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/acptap/acptap/host/pipeline"
	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/internal/jsonl"
	"github.com/acptap/acptap/internal/private"
)

// importWire copies a wire log from outside the store to dst (staging's
// wire/<connection>.jsonl), so that the store holds every wire log its
// outputs derive from and the next rebuild finds it. Lines are copied as
// they are, except that a client-to-agent frame is scrubbed as the
// recorder scrubs it (ASR-712) — a hand-made log may not have been — and
// an unreadable line naming mcpServers is cut after that word.
func importWire(src, dst string) error {
	_, err := importWireChanged(src, dst)
	return err
}

// importWireChanged is importWire, and says whether a line was changed
// (scrubbed or cut): the copy is not byte for byte the original.
func importWireChanged(src, dst string) (changed bool, err error) {
	return importWireScanned(src, dst, nil)
}

// importWireScanned is importWireChanged for a log scanned already: when
// the scan says no line can change (WireScan.MayScrub false), the file is
// copied whole (copy_file_range on Linux), not line by line.
func importWireScanned(src, dst string, scan *pipeline.WireScan) (changed bool, err error) {
	if scan != nil && !scan.MayScrub {
		return false, copyWire(src, dst, scan.Size())
	}
	in, err := os.Open(src)
	if err != nil {
		return false, fmt.Errorf("import %s: %w", src, err)
	}
	defer in.Close()
	if err := private.MkdirAll(filepath.Dir(dst)); err != nil {
		return false, fmt.Errorf("import %s: %w", src, err)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, private.FileMode)
	if err != nil {
		return false, fmt.Errorf("import %s: %w", src, err)
	}
	bw := bufio.NewWriterSize(out, 64<<10)
	// Lines are bounded as the wire log's reader bounds them; a torn tail
	// is copied as it is, still torn, for the reader to report.
	lr := jsonl.NewReader(in, wire.DefaultMaxLine)
	var line []byte
	for err == nil {
		var b []byte
		b, err = lr.Next()
		if errors.Is(err, io.EOF) && len(lr.Tail()) > 0 {
			line = lr.Tail()
		} else if err != nil {
			break
		} else {
			line = append(append(line[:0], b...), '\n')
		}
		if lr.Line() > 1 || (err != nil && lr.Line() > 0) {
			scrubbed := wire.ScrubLine(line)
			changed = changed || !bytes.Equal(scrubbed, line)
			line = scrubbed
		}
		if _, werr := bw.Write(line); werr != nil {
			err = werr
		}
	}
	if errors.Is(err, io.EOF) {
		err = nil
	}
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
		return false, fmt.Errorf("import %s: %w", src, err)
	}
	return changed, nil
}

// copyWire copies src to dst as it is, synced; the copy must be the size
// the scan saw (else the file changed since: dst is removed, and the
// caller imports again line by line, or fails).
func copyWire(src, dst string, size int64) error {
	if err := private.MkdirAll(filepath.Dir(dst)); err != nil {
		return fmt.Errorf("import %s: %w", src, err)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, private.FileMode)
	if err != nil {
		return fmt.Errorf("import %s: %w", src, err)
	}
	n, err := copyInto(out, src)
	if err == nil && n != size {
		err = fmt.Errorf("the file changed while it was read (%d bytes, %d when scanned)", n, size)
	}
	if err != nil {
		os.Remove(dst)
		return fmt.Errorf("import %s: %w", src, err)
	}
	return nil
}

// copyInto copies the file at src into out (copy_file_range on Linux), syncs and closes
// out, and returns the bytes copied.
func copyInto(out *os.File, src string) (int64, error) {
	return copyUntil(out, src, nil)
}

// copyChunk is how many bytes copyUntil copies between looks at stop.
const copyChunk = 16 << 20

// errCopyStopped is copyUntil's error when stop was set.
var errCopyStopped = errors.New("copy stopped")

// copyUntil is copyInto that gives up, with errCopyStopped, once stop
// (nil: never) is set: it looks between chunks of copyChunk bytes (each
// one copy_file_range still).
func copyUntil(out *os.File, src string, stop *atomic.Bool) (int64, error) {
	in, err := os.Open(src)
	var n int64
	if err == nil {
		for {
			if stop != nil && stop.Load() {
				err = errCopyStopped
				break
			}
			k, cerr := io.CopyN(out, in, copyChunk)
			n += k
			if cerr != nil {
				if !errors.Is(cerr, io.EOF) {
					err = cerr
				}
				break
			}
		}
		in.Close()
	}
	if errors.Is(err, errCopyStopped) {
		out.Close()
		return n, err
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return n, err
}
