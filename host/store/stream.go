package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/acptap/acptap/internal/jsonl"
	"github.com/acptap/acptap/internal/private"
)

// Repair reports a torn tail cut from a JSONL file when it was reopened.
type Repair struct {
	// Path is the repaired file.
	Path string
	// Bytes is how many bytes followed the last LF.
	Bytes int64
	// Backup is the file that now holds those bytes
	// (<path>.torn-<unix nanoseconds>, mode 0600).
	Backup string
}

// StreamWriter appends lines to a JSONL file (an ASR stream or an AEP file).
// Each line goes out in one write call with its LF, the commit mark (a line
// over 1 MiB in two, the LF last, not to copy it). After a
// failed write the writer refuses further lines, so a partial line can never
// be glued to the next one. Release closes the file descriptor without
// ending the writer; the next line reopens the file for appending, so a
// connection with many sessions keeps a bounded set of files open. Methods
// are safe for concurrent use.
type StreamWriter struct {
	mu    sync.Mutex
	f     *os.File
	path  string
	lines int
	buf   []byte
	err   error
	// hold > 0 (SetBuffer): lines gather in pend and go out in one write
	// once pend reaches hold bytes, and at Flush, Sync, Release and Close.
	hold int
	pend []byte
}

// SetBuffer makes the writer gather lines and write them n bytes at a
// time (0: one write per line, the default), for a file nobody reads
// until the writer is flushed or closed — a rebuild's staging outputs,
// which are swapped in only after every writer closed. A line over the
// buffer is written at once (after what is gathered). Lines still counts
// every line accepted; a failed write of gathered lines is returned by the
// call that made it (a later WriteLine, Flush, Sync, Release or Close) and
// is sticky, as after any failed write.
func (w *StreamWriter) SetBuffer(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.hold = max(n, 0)
}

// Flush writes the lines gathered (SetBuffer).
func (w *StreamWriter) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flush()
}

// flush writes pend; called with mu held.
func (w *StreamWriter) flush() error {
	if len(w.pend) == 0 {
		return nil
	}
	if w.err != nil {
		w.pend = w.pend[:0] // lost with the write that failed (its error was returned)
		return fmt.Errorf("write %s: %w", w.path, w.err)
	}
	if err := w.reopen(); err != nil {
		return err
	}
	_, err := w.f.Write(w.pend)
	w.pend = w.pend[:0]
	if err != nil {
		w.err = err
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	return nil
}

// reopen opens the file again after Release; called with mu held.
func (w *StreamWriter) reopen() error {
	if w.f != nil {
		return nil
	}
	f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_APPEND, private.FileMode)
	if err != nil {
		return fmt.Errorf("write %s: reopen: %w", w.path, err) // not sticky: nothing was written
	}
	w.f = f
	return nil
}

// bigLine: longer lines are written without a copy (see WriteLine).
const bigLine = 1 << 20

var lf = []byte{'\n'}

// errClosed is the sticky error of a closed writer.
var errClosed = errors.New("stream writer is closed")

// openLines repairs path's torn tail, if any, and opens it for appending.
func openLines(path string) (*StreamWriter, *Repair, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, private.FileMode)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	if err := f.Chmod(private.FileMode); err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", path, err)
	}
	lines, committed, size, err := scanLines(f)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", path, err)
	}
	var rep *Repair
	if committed < size {
		if rep, err = cutTail(f, path, committed, size); err != nil {
			return nil, nil, fmt.Errorf("repair %s: %w", path, err)
		}
	}
	af, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, private.FileMode)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &StreamWriter{f: af, path: path, lines: lines}, rep, nil
}

// scanLines counts LFs and returns the offset just after the last one.
func scanLines(f *os.File) (lines int, committed, size int64, err error) {
	return jsonl.Count(f)
}

// cutTail copies bytes [committed, size) to a backup file, then truncates.
// The backup is synced before the truncation, so a crash loses nothing.
func cutTail(f *os.File, path string, committed, size int64) (*Repair, error) {
	backup := path + ".torn-" + strconv.FormatInt(time.Now().UnixNano(), 10)
	b, err := os.OpenFile(backup, os.O_WRONLY|os.O_CREATE|os.O_EXCL, private.FileMode)
	if err != nil {
		return nil, err
	}
	_, err = io.Copy(b, io.NewSectionReader(f, committed, size-committed))
	if err == nil {
		err = b.Chmod(private.FileMode)
	}
	if err == nil {
		err = b.Sync()
	}
	if cerr := b.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = f.Truncate(committed)
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		return nil, err
	}
	return &Repair{Path: path, Bytes: size - committed, Backup: backup}, nil
}

// WriteLine appends line and an LF in one write (two for a line over 1 MiB,
// the LF last). The line must be non-empty
// and must not contain an LF.
func (w *StreamWriter) WriteLine(line []byte) error {
	if len(line) == 0 || bytes.IndexByte(line, '\n') >= 0 {
		return fmt.Errorf("write %s: a line must be non-empty and hold no LF", w.path)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return fmt.Errorf("write %s: %w", w.path, w.err)
	}
	if w.hold > 0 && len(line) < w.hold {
		w.pend = append(append(w.pend, line...), '\n')
		w.lines++
		if len(w.pend) >= w.hold {
			return w.flush()
		}
		return nil
	}
	if err := w.flush(); err != nil {
		return err
	}
	if err := w.reopen(); err != nil {
		return err
	}
	var err error
	if len(line) > bigLine {
		// Not copied to add the LF: the line, then its LF. Until the LF
		// is written the line is an uncommitted tail, as after any
		// interrupted write, which readers skip and openLines cuts.
		if _, err = w.f.Write(line); err == nil {
			_, err = w.f.Write(lf)
		}
	} else {
		w.buf = append(append(w.buf[:0], line...), '\n')
		_, err = w.f.Write(w.buf)
	}
	if err != nil {
		w.err = err
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	w.lines++
	return nil
}

// Lines is the number of lines accepted, header included: written, or gathered to be
// written (SetBuffer).
func (w *StreamWriter) Lines() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lines
}

// Path is the file being written.
func (w *StreamWriter) Path() string { return w.path }

// Sync flushes the file to stable storage.
func (w *StreamWriter) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if err := w.flush(); err != nil {
		return err
	}
	if w.f == nil {
		return syncPath(w.path)
	}
	return w.f.Sync()
}

// Release closes the file descriptor; the next WriteLine reopens it.
func (w *StreamWriter) Release() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if errors.Is(w.err, errClosed) {
		return nil
	}
	ferr := w.flush()
	if w.f == nil {
		return ferr
	}
	f := w.f
	w.f = nil
	if err := f.Close(); err != nil && ferr == nil {
		return fmt.Errorf("release %s: %w", w.path, err)
	}
	return ferr
}

// Open reports whether the writer holds a file descriptor.
func (w *StreamWriter) Open() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.f != nil
}

func syncPath(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// Close closes the file; calling it again is a no-op.
func (w *StreamWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if errors.Is(w.err, errClosed) {
		return nil
	}
	ferr := w.flush()
	w.err = errClosed
	if w.f == nil {
		return ferr
	}
	if err := w.f.Close(); err != nil && ferr == nil {
		return fmt.Errorf("close %s: %w", w.path, err)
	}
	return ferr
}
