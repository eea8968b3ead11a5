package wire

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/acptap/acptap/internal/private"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/aep"
)

// maxKeptBuffer caps the encode buffer kept between Appends, so one huge line
// does not pin its memory for the life of the connection.
const maxKeptBuffer = 4 << 20

// Writer appends entries to a wire log. It buffers; the caller calls Flush
// once per batch. All methods are safe for concurrent use.
type Writer struct {
	mu     sync.Mutex
	f      *os.File
	bw     *bufio.Writer
	buf    []byte
	seq    uint64
	closed bool
	tc     timeCache
}

// Create makes a new wire log at path (mode 0600, never overwriting an
// existing file), creating missing parent directories with mode 0700, and
// writes the header line.
func Create(path string, hdr Header) (*Writer, error) {
	if err := private.MkdirAll(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("create wire log: %w", err)
	}
	f, err := private.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return nil, fmt.Errorf("create wire log: %w", err)
	}
	h := headerJSON{Type: "header", Format: Format, Version: Version,
		Connection: hdr.Connection, Agent: hdr.Agent, Source: hdr.Source}
	// The agent's argv may carry credentials (--api-key=…, a URL with
	// user:pass@): the redaction floor's secret patterns apply to it.
	h.Agent.Command = aep.RedactArgv(h.Agent.Command)
	if h.Agent.Command == nil {
		h.Agent.Command = []string{}
	}
	if !hdr.StartedAt.IsZero() {
		h.StartedAt = hdr.StartedAt.UTC().Format(time.RFC3339Nano)
	}
	line, err := json.Marshal(h)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("create wire log: encode header: %w", err)
	}
	w := &Writer{f: f, bw: bufio.NewWriterSize(f, 64<<10)}
	w.bw.Write(line)
	if err := w.bw.WriteByte('\n'); err != nil {
		f.Close()
		return nil, fmt.Errorf("create wire log: %w", err)
	}
	return w, nil
}

// Continue reopens a wire log another process wrote to go on appending after its entry
// seq: the file is first cut back to size bytes (what that process had written when it
// handed the log over; anything after it is a half-written continuation, which this one
// replaces).
func Continue(path string, size int64, seq uint64) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("continue wire log: %w", err)
	}
	if fi, err := f.Stat(); err != nil || fi.Size() < size {
		f.Close()
		if err == nil {
			err = fmt.Errorf("%d bytes, shorter than the %d handed over", fi.Size(), size)
		}
		return nil, fmt.Errorf("continue wire log %s: %w", path, err)
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return nil, fmt.Errorf("continue wire log: %w", err)
	}
	if _, err := f.Seek(size, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("continue wire log: %w", err)
	}
	return &Writer{f: f, bw: bufio.NewWriterSize(f, 64<<10), seq: seq}, nil
}

// Size is the bytes written so far, buffered ones included.
func (w *Writer) Size() (int64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, ErrClosed
	}
	if err := w.bw.Flush(); err != nil {
		return 0, fmt.Errorf("flush wire log: %w", err)
	}
	off, err := w.f.Seek(0, 1)
	if err != nil {
		return 0, fmt.Errorf("wire log size: %w", err)
	}
	return off, nil
}

// Append writes e with the next sequence number and returns it. A non-zero
// e.Seq must equal that number (a cross-check for callers that count too).
// Client-to-agent lines are scrubbed (see Scrub) before they are encoded;
// the caller's bytes are not modified.
func (w *Writer) Append(e Entry) (uint64, error) {
	e, err := w.AppendEntry(e)
	if err != nil {
		return 0, err
	}
	return e.Seq, nil
}

// entryOverhead is room enough for a frame entry's fields beside its line.
const entryOverhead = 160

// AppendEntry is Append returning the entry as written: its seq, and its
// line as scrubbed, so a caller that maps what it captured maps exactly
// what the wire log holds without scrubbing a second time.
func (w *Writer) AppendEntry(e Entry) (Entry, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return e, ErrClosed
	}
	next := w.seq + 1
	if e.Seq != 0 && e.Seq != next {
		return e, fmt.Errorf("append: entry seq %d, want %d", e.Seq, next)
	}
	e.Seq = next
	if e.Type == TypeFrame && e.Dir == sdk.C2A {
		e.Line, _ = Scrub(e.Line)
	}
	var buf []byte
	var err error
	if e.Type == TypeFrame && len(e.Line) > streamAbove {
		buf, err = writeBigFrame(w.bw, w.buf, &e)
	} else if w.bw.Available() >= len(e.Line)+len(e.Line)/4+entryOverhead {
		// Encoded straight into the writer's buffer, which Write then takes without a
		// copy (an entry that outgrew the room is copied, as below).
		var b []byte
		if b, err = appendEntryT(w.bw.AvailableBuffer(), &e, &w.tc); err != nil {
			return e, fmt.Errorf("append: %w", err)
		}
		_, err = w.bw.Write(b)
		buf = w.buf
	} else {
		buf, err = appendEntryT(w.buf[:0], &e, &w.tc)
		if err != nil {
			return e, fmt.Errorf("append: %w", err)
		}
		_, err = w.bw.Write(buf)
	}
	if cap(buf) > maxKeptBuffer {
		buf = nil
	}
	w.buf = buf
	if err != nil {
		return e, fmt.Errorf("append: %w", err)
	}
	w.seq = next
	return e, nil
}

// Flush writes buffered entries to the file (without fsync).
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	if err := w.bw.Flush(); err != nil {
		return fmt.Errorf("flush wire log: %w", err)
	}
	return nil
}

// Close flushes, syncs and closes the file. Calling it again is a no-op.
func (w *Writer) Close() error { return w.close(true) }

// CloseNoSync flushes and closes the file without waiting for stable
// storage: record hands the connection to a finisher, which syncs the file
// (SyncFile) before it maps it, so the editor does not wait for the disk.
func (w *Writer) CloseNoSync() error { return w.close(false) }

func (w *Writer) close(sync bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	err := w.bw.Flush()
	if err == nil && sync {
		err = w.f.Sync()
	}
	err = errors.Join(err, w.f.Close())
	if err != nil {
		return fmt.Errorf("close wire log: %w", err)
	}
	return nil
}

// SyncFile flushes a closed wire log to stable storage.
func SyncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("sync wire log: %w", err)
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync wire log: %w", err)
	}
	return nil
}
