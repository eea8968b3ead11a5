package rebuild

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/host/wire"
)

// mapUnplannedOn: a single log imported from outside the store is mapped
// before it is planned (mapUnplanned); off: planned first (tests compare).
var mapUnplannedOn = true

// unplannedUsed counts the mappings made before the plan that Run kept (tests).
var unplannedUsed atomic.Int64

// unplanned is a log imported from outside the store and mapped before
// the rebuild planned it. A plan needs the sessions a log names, which
// only a whole pass over it tells (the planning scan: ~0.1–0.2 s for
// 100 MB, during which the plugins wait); the mapping's own first pass
// (pipeline.Rebuild without a scan) learns them too, as it maps. So the
// log is mapped first, into the staging store, and planned after with the
// sessions the mapping named. Run keeps that mapping when the plan turns
// out to be that connection alone (no log of the store names its
// sessions), as it is for a log given to a store that holds no other
// connection of them; otherwise it maps the plan as before.
type unplanned struct {
	path    string // as given
	src     string // its absolute path
	conn    *Conn  // its Path is the staging store's link to the log
	early   *earlyCopy
	staging string
	st2     *store.Store
	// What the mapping reported, kept until Run takes the mapping: its
	// result counters, stale entries, the lines it wrote to Out and Err.
	res      *Result
	stale    map[string]int
	out, err bytes.Buffer
	frames   uint64
	mapErr   error
	// before are the stamps of the store's files of each session, taken
	// when the mapping first named it (before it mapped a frame of it).
	before  map[string]map[string]stamp
	dropped bool
}

// mapUnplanned maps the one log req gives, when it is a log from outside
// the store (its connection is not byID's), before it is planned. Nil
// (having left nothing behind but the early copy cp, which Run then uses
// as its own) when the log cannot be taken so: the request is another, the
// log cannot be linked, or a line of it would change in the import (a
// scrubbed secret, ASR-712: a copy line by line would not be the file, and
// the mapping read the file) or could not be read (skipped, torn: the
// import copies such a log line by line).
func mapUnplanned(ctx context.Context, o Options, req Request, tmp string, byID map[string]*Conn) (u *unplanned, cp *earlyCopy) {
	if !mapUnplannedOn || !copyEarly || !mapFromLog || len(req.Files) != 1 || req.All || len(req.Sessions) > 0 {
		return nil, nil
	}
	f := req.Files[0]
	abs, err := filepath.Abs(f)
	if err != nil {
		return nil, nil
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, nil
	}
	r, err := wire.Open(abs)
	if err != nil {
		return nil, nil
	}
	hdr := r.Header()
	r.Close()
	if hdr.Connection == "" || byID[hdr.Connection] != nil {
		return nil, nil
	}
	u = &unplanned{path: f, src: abs, res: &Result{Stale: map[string]string{}, NotRebuilt: map[string]string{}},
		stale: map[string]int{}, before: map[string]map[string]stamp{}}
	u.early = startCopy(tmp, f, byID, true)
	u.conn = &Conn{Path: abs, Shown: f, Header: hdr, Size: fi.Size(), Import: true, early: u.early, mod: fi.ModTime(), unplanned: true}
	u.staging = filepath.Join(tmp, stagingPrefix+strconv.FormatInt(time.Now().UnixNano(), 10))
	if u.st2, err = store.Open(u.staging); err != nil {
		os.RemoveAll(u.staging)
		return nil, u.early
	}
	dst := u.st2.WirePath(hdr.Connection)
	if !u.early.stand(dst, abs, fi.Size(), fi.ModTime()) {
		u.drop()
		return nil, u.early
	}
	u.conn.Path = dst

	mctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var changed bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if changed = importChanges(abs); changed {
			cancel() // the mapping is not the one the import's copy gives
		}
	}()
	uo := o
	uo.Out, uo.Err = &u.out, &u.err
	prog := newProgress(o.Progress, 1, fi.Size())
	u.frames, u.mapErr = mapConn(mctx, uo, u.st2, u.conn, u.res, u.stale, nil, func(s string) {
		files, err := outputFiles(o.Store, s)
		if err != nil {
			files = nil // the swap lists them again, and fails there
		}
		u.before[s] = stamps(files)
	}, func(p wire.Problem) {
		if p.Skipped || p.Torn {
			cancel() // imported line by line: that copy is what is mapped
		}
	})
	prog.step(fi.Size(), u.frames)
	prog.end()
	wg.Wait()
	if changed || u.res.SkippedLines > 0 || u.res.Torn > 0 {
		u.drop()
		return nil, u.early
	}
	return u, u.early
}

// connOf is the connection (nil for a nil u).
func (u *unplanned) connOf() *Conn {
	if u == nil {
		return nil
	}
	return u.conn
}

// drop removes what the mapping made but the early copy, which goes back
// to being an early copy (its link removed), and gives the connection back
// its log, to be imported and mapped as planned (line by line: it has no
// scan).
func (u *unplanned) drop() {
	if u.dropped {
		return
	}
	u.dropped = true
	u.early.unstand()
	os.RemoveAll(u.staging)
	u.conn.Path, u.conn.unplanned = u.src, false
}

// take gives Run the mapping's counters and lines.
func (u *unplanned) take(o Options, res *Result, stale map[string]int) {
	res.SkippedLines += u.res.SkippedLines
	res.Torn += u.res.Torn
	res.LostEntries += u.res.LostEntries
	res.Failed = res.Failed || u.res.Failed
	for s, v := range u.res.Stale {
		res.Stale[s] = v
	}
	for s, n := range u.stale {
		stale[s] += n
	}
	o.Out.Write(u.out.Bytes())
	o.Err.Write(u.err.Bytes())
}

// uniq is ids without repeats, in order.
func uniq(ids []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// importChanges says whether importing the log line by line (ASR-712:
// importWireScanned, wire.ScrubLine) would change a line of it: a line
// after the header that names mcpServers and that ScrubLine changes.
// Only those lines are looked at, so the file is read at the speed of a
// search for the name. An unreadable file counts as changed.
func importChanges(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return true
	}
	defer f.Close()
	buf := make([]byte, 4<<20)
	have := 0     // bytes in buf; buf[0] starts a line
	first := true // buf[0] starts the header
	for {
		n, rerr := f.Read(buf[have:])
		have += n
		end := have // lines up to here are whole
		if rerr == nil {
			if i := bytes.LastIndexByte(buf[:have], '\n'); i >= 0 {
				end = i + 1
			} else if have == len(buf) {
				buf = append(buf, make([]byte, len(buf))...) // a line longer than the buffer
				continue
			} else {
				continue
			}
		} else if !errors.Is(rerr, io.EOF) {
			return true
		}
		chunk := buf[:end]
		for off := 0; ; {
			// The name found by its tail: a search for "mcpServers" stops at
			// every m of the log ("method", "message"), its capital S is rare.
			i := bytes.Index(chunk[off:], mcpServersName[3:])
			if i < 0 {
				break
			}
			i += off
			if i < 3 || !bytes.Equal(chunk[i-3:i], mcpServersName[:3]) {
				off = i + 1
				continue
			}
			i -= 3
			s := bytes.LastIndexByte(chunk[:i], '\n') + 1
			e := len(chunk)
			if j := bytes.IndexByte(chunk[i:], '\n'); j >= 0 {
				e = i + j + 1
			}
			if !(first && s == 0) && !bytes.Equal(wire.ScrubLine(chunk[s:e]), chunk[s:e]) {
				return true
			}
			off = e
		}
		if end > 0 {
			first = false
		}
		if rerr != nil {
			return false
		}
		have = copy(buf, buf[end:have])
	}
}

var mcpServersName = []byte("mcpServers")
