package rebuild

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/acptap/acptap/host/pipeline"
	"github.com/acptap/acptap/host/wire"
)

// Conn is one wire log, read once for planning.
type Conn struct {
	// Path is the file mapped; Shown is how reports name it (the path the
	// caller gave, for a wire log imported from outside the store).
	Path, Shown string
	Header      wire.Header
	// Sessions are the sessions the connection names, in order.
	Sessions []string
	Size     int64
	// Import is true for a wire log from outside the store's wire/
	// directory: the rebuild copies it in.
	Import bool
	// Scan is the planning pass over the log, which the connection's
	// pipeline takes its first pass from (pipeline.Options.Scan).
	Scan *pipeline.WireScan
	// early is the copy of an imported log made while it was scanned
	// (nil: none).
	early *earlyCopy
	// mod is the log's modification time before it was scanned.
	mod time.Time
	// unplanned: mapped before it was planned (mapUnplanned), with no
	// scan; the mapping tells its Sessions.
	unplanned bool
}

// ID is the connection id.
func (c *Conn) ID() string { return c.Header.Connection }

// scanConn reads a wire log's header and the sessions it names.
func scanConn(path string) (*Conn, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("wire log: %w", err)
	}
	r, err := wire.Open(abs)
	if err != nil {
		return nil, err
	}
	hdr := r.Header()
	r.Close()
	if hdr.Connection == "" {
		return nil, fmt.Errorf("wire log %s: the header names no connection", path)
	}
	scan, err := pipeline.ScanWire(abs)
	if err != nil {
		return nil, err
	}
	return &Conn{Path: abs, Shown: path, Header: hdr, Sessions: scan.Sessions, Size: fi.Size(), Scan: scan, mod: fi.ModTime()}, nil
}

// storeWire lists the wire logs under dir (<store>/wire), sorted by name.
func storeWire(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list wire logs: %w", err)
	}
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".jsonl") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out, nil
}

// order sorts connections as the rule says: header startedAt, then
// connection id (a converted log has no startedAt and sorts first).
func order(conns []*Conn) {
	slices.SortStableFunc(conns, func(a, b *Conn) int {
		if c := a.Header.StartedAt.Compare(b.Header.StartedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID(), b.ID())
	})
}
