package config

import (
	"fmt"
	"io"
	"os"

	"github.com/acptap/acptap/host/logthrottle"
	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/internal/private"
	"github.com/hashicorp/go-hclog"
)

// NewLogger builds the host's logger at c.Log.Level. By default it appends
// JSON lines to c.Log.File (default <store>/logs/acptap.log; directory 0700,
// file 0600); with c.Log.Stderr it writes human-readable lines to stderr.
// It never writes to stdout, which belongs to the editor. The Closer closes
// the log file (a no-op for stderr).
func NewLogger(c *Config, name string) (hclog.Logger, io.Closer, error) {
	level := hclog.LevelFromString(c.Log.Level)
	if level == hclog.NoLevel {
		return nil, nil, fmt.Errorf("new logger: log.level %q is not a level", c.Log.Level)
	}
	opts := &hclog.LoggerOptions{Name: name, Level: level, Color: hclog.ColorOff}
	if c.Log.Stderr {
		opts.Output = os.Stderr
		return hclog.New(opts), nopCloser{}, nil
	}
	path := c.Log.File
	if path == "" {
		if c.Store == "" {
			return nil, nil, fmt.Errorf("new logger: neither log.file nor store is set")
		}
		path = store.LogPath(c.Store)
	}
	f, err := openLogFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("new logger: %w", err)
	}
	if err := f.Chmod(private.FileMode); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("new logger: %w", err)
	}
	// Repeats of one message beyond a burst are counted, not written
	// (issue 18: 1M bad lines made a 774 MB log).
	tw := logthrottle.New(f)
	opts.Output = tw
	opts.JSONFormat = true
	return hclog.New(opts), tw, nil
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }
