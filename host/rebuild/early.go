package rebuild

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/internal/private"
)

// earlyCopyPrefix names the copies a rebuild makes in <store>/tmp of the
// wire logs it imports while it scans them (startCopy).
const earlyCopyPrefix = "import-"

// copyEarly off: an imported log is copied after its scan, as before
// (tests compare).
var copyEarly = true

// earlyUsed counts the copies moved to their place (tests).
var earlyUsed atomic.Int64

// earlyCopy is the copy of a wire log from outside the store, made into
// <store>/tmp while the log is scanned, so that the import after the scan
// (copied whole when no line can change: WireScan.MayScrub) is a rename
// rather than a copy and a sync on the start's critical path.
type earlyCopy struct {
	path string
	done chan struct{}
	n    int64
	err  error
	used bool // moved to its place (use)
}

// startCopy starts copying the wire log at src into tmp when it is not a
// log of the store (its header names a connection byID does not hold);
// nil when it does not (or its header is unreadable: the scan reports
// that).
func startCopy(tmp, src string, byID map[string]*Conn) *earlyCopy {
	if !copyEarly {
		return nil
	}
	r, err := wire.Open(src)
	if err != nil {
		return nil
	}
	id := r.Header().Connection
	r.Close()
	if id == "" || byID[id] != nil {
		return nil
	}
	f, err := os.CreateTemp(tmp, earlyCopyPrefix+"*.jsonl")
	if err != nil {
		return nil
	}
	f.Chmod(private.FileMode)
	c := &earlyCopy{path: f.Name(), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		c.n, c.err = copyInto(f, src)
	}()
	return c
}

// use moves the finished copy to dst when it holds the bytes the scan
// read (its size; as copyWire checks); ok false: it does not (or failed),
// and is removed: the caller imports the log as before.
func (c *earlyCopy) use(dst string, size int64) (ok bool, err error) {
	if c == nil {
		return false, nil
	}
	<-c.done
	if c.err != nil || c.n != size {
		os.Remove(c.path)
		return false, nil
	}
	if err := private.MkdirAll(filepath.Dir(dst)); err != nil {
		os.Remove(c.path)
		return false, fmt.Errorf("import: %w", err)
	}
	if err := os.Rename(c.path, dst); err != nil {
		os.Remove(c.path)
		return false, fmt.Errorf("import: %w", err)
	}
	c.used = true
	earlyUsed.Add(1)
	return true, nil
}

// discard waits for the copy and removes it, unless use moved it (nil:
// nothing).
func (c *earlyCopy) discard() {
	if c == nil {
		return
	}
	<-c.done
	if !c.used {
		os.Remove(c.path)
	}
}

// removeEarlyCopies removes the copies an interrupted rebuild left in tmp
// (called with the store's rebuild lock held: none is in use).
func removeEarlyCopies(tmp string) {
	ents, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasPrefix(e.Name(), earlyCopyPrefix) && strings.HasSuffix(e.Name(), ".jsonl") {
			os.Remove(filepath.Join(tmp, e.Name()))
		}
	}
}
