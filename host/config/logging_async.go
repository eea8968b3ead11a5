package config

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/logthrottle"
	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/internal/private"
)

// earlyLogLimit bounds what a logger whose file is not open yet keeps.
const earlyLogLimit = 1 << 20

// NewLoggerAsync is NewLogger for record, whose exit must never wait on the
// log file (issue 18.2: a log file whose open blocks, a FIFO or a hung
// mount): the file is opened in the background, and what is logged before
// it is open is kept (up to 1 MiB, then counted) and written first. If the
// open never returns, nothing waits for it. Errors known without opening
// (a bad level, no path) are returned at once; an open that fails later is
// reported to onErr.
func NewLoggerAsync(c *Config, name string, onErr func(error)) (hclog.Logger, io.Closer, error) {
	level := hclog.LevelFromString(c.Log.Level)
	if level == hclog.NoLevel || c.Log.Stderr {
		return NewLogger(c, name)
	}
	path := c.Log.File
	if path == "" {
		if c.Store == "" {
			return NewLogger(c, name) // the same error
		}
		path = store.LogPath(c.Store)
	}
	w := &lateWriter{}
	go func() {
		f, err := openLogFile(path)
		if err != nil {
			if onErr != nil {
				onErr(err)
			}
			w.fail()
			return
		}
		w.set(f)
	}()
	// Repeats of one message beyond a burst are counted, not written, as
	// NewLogger does.
	tw := logthrottle.New(w)
	return hclog.New(&hclog.LoggerOptions{Name: name, Level: level, Color: hclog.ColorOff, Output: tw, JSONFormat: true}), tw, nil
}

func openLogFile(path string) (*os.File, error) {
	if err := private.MkdirAll(filepath.Dir(path)); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, private.FileMode)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(private.FileMode); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// lateWriter writes to a file that is opened later; until then it keeps
// what it is given.
type lateWriter struct {
	mu      sync.Mutex
	f       *os.File
	early   []byte
	dropped int
	failed  bool
	closed  bool
}

func (w *lateWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.f != nil:
		return w.f.Write(p)
	case w.failed || w.closed:
	case len(w.early)+len(p) <= earlyLogLimit:
		w.early = append(w.early, p...)
	default:
		w.dropped++
	}
	return len(p), nil
}

func (w *lateWriter) set(f *os.File) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		f.Close()
		return
	}
	w.f = f
	_, _ = f.Write(w.early)
	if w.dropped > 0 {
		_, _ = f.WriteString(`{"@level":"warn","@message":"log lines dropped while the log file was being opened","dropped":` +
			strconv.Itoa(w.dropped) + "}\n")
	}
	w.early = nil
}

func (w *lateWriter) fail() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.failed, w.early = true, nil
}

// Close closes the file if it is open; a file opened afterwards is closed
// at once.
func (w *lateWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	if w.f != nil {
		return w.f.Close()
	}
	return nil
}
