package rebuild

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acptap/acptap/host/priority"
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

// mapFromLog: a log copied whole is mapped from the file itself, through a
// link where its copy goes (earlyCopy.stand), while the copy finishes —
// below the plugins' priority, out of the start's way (lowCopy) — instead
// of the mapping waiting for the copy; off: the mapping reads the copy, as
// before (tests compare).
var mapFromLog = true

// lowCopy: the copy that the mapping does not wait for runs on a thread at
// the plugins' priority (priority.Target).
var lowCopy = true

// failEarlyCopy makes every copy made during a scan fail (tests).
var failEarlyCopy bool

// earlyCopy is the copy of a wire log from outside the store, made into
// <store>/tmp while the log is scanned, so that the import after the scan
// (copied whole when no line can change: WireScan.MayScrub) is a rename
// rather than a copy and a sync on the start's critical path.
type earlyCopy struct {
	path string
	done chan struct{}
	n    int64
	err  error
	used bool // moved to its place (use, finish)
	// stop makes the copy give up (discard: the copy is not needed).
	stop atomic.Bool

	// A copy the mapping does not wait for (stand): the link standing
	// where it goes, the log it links to, and the log's size and
	// modification time when it was scanned.
	standing bool
	dst, src string
	size     int64
	mod      time.Time
}

// startCopy starts copying the wire log at src into tmp when it is not a
// log of the store (its header names a connection byID does not hold);
// nil when it does not (or its header is unreadable: the scan reports
// that).
func startCopy(tmp, src string, byID map[string]*Conn, low bool) *earlyCopy {
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
	copyIt := func() {
		defer close(c.done)
		c.n, c.err = copyUntil(f, src, &c.stop)
		if failEarlyCopy {
			c.err = errors.New("failed (a test)")
		}
	}
	if low && lowCopy {
		lowered(copyIt)
	} else {
		go copyIt()
	}
	return c
}

var (
	lowOnce sync.Once
	lowJobs chan func()
)

// lowered runs fn on the process's one goroutine at the plugins' priority
// (priority.LowerThread), in the order given. The goroutine and its thread
// live as long as the process: a thread that ends sends the parent-death
// signal to the children forked from it (the plugins: pluginhost sets
// Pdeathsig), and a goroutine locked to its thread ends that thread.
// Its thread is lowered and nothing else: LowerThread's extra P is given
// back at once (a copy runs in the kernel, where the runtime takes the P
// back from a thread anyway). Not lowered (no such thread here): fn runs
// at the normal priority all the same.
func lowered(fn func()) {
	lowOnce.Do(func() {
		lowJobs = make(chan func(), 16)
		go func() {
			release, _ := priority.LowerThread(priority.Target)
			release()
			for job := range lowJobs {
				job()
			}
		}()
	})
	select {
	case lowJobs <- fn:
	default:
		go func() { lowJobs <- fn }() // many logs given: not in order, but never waiting here
	}
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

// stand puts a symbolic link to the log src where its copy goes (dst), so
// that the connection is mapped from src while the copy finishes; finish,
// after the mapping, moves the copy over the link. size and mod are src's
// when it was scanned (the mapping read those bytes: finish checks that
// they are still the file's). False: no link (nil, or none can be made
// here): the caller waits for the copy (use).
func (c *earlyCopy) stand(dst, src string, size int64, mod time.Time) bool {
	if c == nil || private.MkdirAll(filepath.Dir(dst)) != nil || os.Symlink(src, dst) != nil {
		return false
	}
	c.standing, c.dst, c.src, c.size, c.mod = true, dst, src, size, mod
	return true
}

// unstand removes stand's link: the copy is an early copy again (use,
// discard). Nil, or not standing: nothing.
func (c *earlyCopy) unstand() {
	if c == nil || !c.standing {
		return
	}
	os.Remove(c.dst)
	c.standing = false
}

// finish puts the copy where stand's link stands, once it is done: the
// copy made during the scan when it holds the bytes scanned, else a new
// one (as copyWire makes it). It fails when the log is no longer the size
// or the modification time it had when it was scanned (what was mapped
// may not be what the store would keep). Nil, or not standing: nothing.
func (c *earlyCopy) finish() error {
	if c == nil || !c.standing {
		return nil
	}
	<-c.done
	c.standing = false
	if fi, err := os.Stat(c.src); err != nil || fi.Size() != c.size || !fi.ModTime().Equal(c.mod) {
		return fmt.Errorf("import: the wire log changed while it was rebuilt")
	}
	if c.err == nil && c.n == c.size {
		if err := os.Rename(c.path, c.dst); err != nil {
			return fmt.Errorf("import: %w", err)
		}
		c.used = true
		earlyUsed.Add(1)
		return nil
	}
	if err := os.Remove(c.dst); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	return copyWire(c.src, c.dst, c.size)
}

// discard waits for the copy and removes it, unless use moved it (nil:
// nothing).
func (c *earlyCopy) discard() {
	if c == nil {
		return
	}
	if !c.used {
		c.stop.Store(true) // not needed: a rebuild that failed or was interrupted does not wait for the rest
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
