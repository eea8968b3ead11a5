package rebuild

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acptap/acptap/host/pipeline"
	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/host/storesink"
	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/internal/private"
	"github.com/acptap/acptap/sdk"
)

// Options configure a rebuild.
type Options struct {
	Store *store.Store
	// Pipeline is the template of every connection's pipeline: revisions,
	// plugin configs, launcher, logger, limits. Run sets the per-connection
	// fields (WirePath, Connection, Agent, Mode, Sink, Sessions and the
	// rebuild hooks).
	Pipeline pipeline.Options
	// Routing, when set, gives each connection's routing (claims and the
	// per-agent schema revision) from its agent command, as record does.
	Routing func(agent []string) pipeline.Routing
	// Out receives what was done (one line per connection, a summary);
	// Err the problems (skipped lines, stale entries, sessions not
	// rebuilt). Nil: discarded.
	Out, Err io.Writer
	// Progress, when set, gets a progress line rewritten in place (give
	// it a terminal only).
	Progress io.Writer
	// Now is the clock for backup names (tests pin it).
	Now func() time.Time
}

// Request says what to rebuild.
type Request struct {
	// All re-derives every session named by a wire log under <store>/wire.
	All bool
	// Sessions, when set, limits the rebuild to these sessions (each with
	// all of its connections).
	Sessions []string
	// Files are wire logs whose sessions are rebuilt (with every other
	// connection of theirs the store holds); a file from outside
	// <store>/wire is copied in.
	Files []string
}

// Result is what a rebuild did.
type Result struct {
	Connections int
	Frames      uint64
	Bytes       int64
	Elapsed     time.Duration
	// Written are the sessions whose outputs were swapped in.
	Written []string
	// Replaced are the store files (relative to the root) whose bytes
	// changed; each old one is kept as <file><Suffix>.
	Replaced []string
	Suffix   string
	// Stale is, per session, what its first stale session entry said
	// against what this rebuild produced.
	Stale map[string]string
	// SkippedLines and LostEntries count wire log lines that were not
	// mapped and the entries they lost (each mapped as a gap); Torn counts
	// torn tails.
	SkippedLines, Torn int
	LostEntries        uint64
	// NotRebuilt are the sessions left as they were, with the reason.
	NotRebuilt map[string]string
	// Failed says the rebuild found a problem (exit 1), though what it
	// could rebuild was swapped in.
	Failed bool
}

// Run rebuilds what req asks. An error means nothing was swapped in: the
// store's outputs are as they were.
func Run(ctx context.Context, o Options, req Request) (*Result, error) {
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Err == nil {
		o.Err = io.Discard
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	res := &Result{Stale: map[string]string{}, NotRebuilt: map[string]string{}}
	started := time.Now()
	root := o.Store.Root()
	tmp := filepath.Join(root, "tmp")
	if err := private.MkdirAll(tmp); err != nil {
		return nil, err
	}
	unlock, err := lockStore(filepath.Join(tmp, lockFile))
	if err != nil {
		return nil, err
	}
	defer unlock()
	finished, err := recoverStaging(tmp)
	for _, d := range finished {
		fmt.Fprintf(o.Err, "acptap rebuild: finished the swap of an interrupted rebuild (%s)\n", d)
	}
	if err != nil {
		return nil, err
	}
	removeEarlyCopies(tmp)
	problem := func(format string, args ...any) {
		res.Failed = true
		fmt.Fprintf(o.Err, "acptap rebuild: "+format+"\n", args...)
	}

	var pl *pool
	if o.Pipeline.Launch != nil {
		pl = newPool(o.Pipeline.Launch)
		defer pl.close()
		o.Pipeline.Launch = pl.Launch
		if len(req.Files) > 0 {
			// The plugins of the first log given start while the logs are
			// planned (by the revision it recorded near its start).
			if rev, ok := peekRevision(req.Files[0]); ok {
				pl.prelaunch(ctx, o.Pipeline.Revisions[rev])
			}
		}
	}
	conns, byID := knownConnections(root, problem)
	want := map[string]bool{}
	if req.All {
		for _, c := range conns {
			for _, s := range c.Sessions {
				want[s] = true
			}
		}
		if len(req.Sessions) == 0 {
			ids, err := o.Store.Sessions()
			if err != nil {
				return nil, err
			}
			for _, id := range ids {
				if !want[id] {
					res.NotRebuilt[id] = "no wire log in the store names it"
				}
			}
		}
	}
	var early []*earlyCopy
	defer func() {
		for _, e := range early {
			e.discard() // the ones not used (use moved the others)
		}
	}()
	// A single log from outside the store is mapped first, planned after.
	spec, specCopy := mapUnplanned(ctx, o, req, tmp, byID)
	var adopted *unplanned
	defer func() {
		if spec != nil && spec != adopted {
			spec.drop() // (adopted: its staging is the rebuild's)
		}
	}()
	for i, f := range req.Files {
		var c *Conn
		var cp *earlyCopy
		switch {
		case spec != nil && i == 0:
			c, cp = spec.conn, spec.early
		case specCopy != nil && i == 0:
			cp = specCopy
		default:
			// A log from outside the store is copied in while it is scanned.
			cp = startCopy(tmp, f, byID, mapFromLog)
		}
		early = append(early, cp)
		if c == nil {
			var err error
			if c, err = scanConn(f); err != nil {
				problem("%s: %s", f, err)
				continue
			}
		}
		switch have := byID[c.ID()]; {
		case have == nil:
			c.Import = true
			c.early = cp
			conns = append(conns, c)
			byID[c.ID()] = c
		case have.Path == c.Path:
		default:
			if same, _ := sameBytes(have.Path, c.Path); !same {
				problem("%s: the store already holds a different wire log of connection %s (%s); rebuild that one, or move it away first", f, c.ID(), have.Path)
				continue
			}
		}
		if len(c.Sessions) == 0 {
			fmt.Fprintf(o.Out, "%s: names no session: nothing to rebuild\n", f)
		}
		for _, s := range c.Sessions {
			want[s] = true
		}
	}
	if len(req.Sessions) > 0 {
		named := want
		want = map[string]bool{}
		for _, s := range req.Sessions {
			if !named[s] {
				problem("session %q: no wire log in the store names it", s)
				continue
			}
			want[s] = true
		}
	}
	todo := closure(conns, want)
	order(todo)
	// The mapping made before the plan is the plan's when the plan is that
	// connection alone; else the plan is mapped (the log imported line by
	// line, having no scan).
	if spec != nil {
		if len(todo) == 1 && todo[0] == spec.conn {
			adopted = spec
			unplannedUsed.Add(1)
		} else {
			spec.drop()
		}
	}
	counts := map[string]int{}
	for _, c := range todo {
		for _, s := range c.Sessions {
			counts[s]++
		}
	}
	for s := range want {
		if n, err := storedConnections(o.Store, s); err != nil {
			res.NotRebuilt[s] = err.Error()
		} else if counts[s] < n {
			res.NotRebuilt[s] = fmt.Sprintf("the store counts %d connections of it, but only %d of their wire logs are known; give the missing ones", n, counts[s])
		}
	}
	names := map[string]map[string]bool{}
	for _, c := range todo {
		name := filepath.Base(c.Path)
		if c.Import {
			name = filepath.Base(o.Store.WirePath(c.ID()))
		}
		for _, s := range c.Sessions {
			if names[s] == nil {
				names[s] = map[string]bool{}
			}
			names[s][name] = true
		}
	}
	for s := range want {
		if _, no := res.NotRebuilt[s]; no {
			continue
		}
		if w, err := unknownWire(o.Store, s, names[s]); err != nil {
			res.NotRebuilt[s] = err.Error()
		} else if w != "" {
			res.NotRebuilt[s] = fmt.Sprintf("its stream holds records mapped from wire log %s, which is neither under %s nor given", w, store.WireDir(root))
		}
	}
	for _, s := range sortedKeys(res.NotRebuilt) {
		problem("session %q not rebuilt: %s", s, res.NotRebuilt[s])
		delete(want, s)
	}
	if len(todo) == 0 {
		res.Elapsed = time.Since(started)
		report(o.Out, res)
		return res, nil
	}

	staging := filepath.Join(tmp, stagingPrefix+strconv.FormatInt(time.Now().UnixNano(), 10))
	var st2 *store.Store
	if adopted != nil {
		staging, st2 = adopted.staging, adopted.st2
	} else if st2, err = store.Open(staging); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(staging)
		}
	}()
	if pl != nil {
		// The first connection's plugins start while the rest of this is
		// done: by the revision its log recorded, the plugins the
		// configuration gives that revision (its own detection decides
		// which it takes).
		if s := todo[0].Scan; s != nil && s.Revision != nil {
			pl.prelaunch(ctx, o.Pipeline.Revisions[s.Revision.Revision])
		}
	}
	before := map[string]map[string]stamp{}
	for s := range want {
		if adopted != nil {
			before[s] = adopted.before[s] // when the mapping first named it
			continue
		}
		files, err := outputFiles(o.Store, s)
		if err != nil {
			return nil, err
		}
		before[s] = stamps(files)
	}
	for _, c := range todo {
		if c == adopted.connOf() {
			res.Bytes += c.Size // linked and mapped (mapUnplanned)
			continue
		}
		if c.Import {
			dst := st2.WirePath(c.ID())
			changed := false
			used := false
			if c.Scan != nil && !c.Scan.MayScrub {
				if mapFromLog && c.early.stand(dst, c.Path, c.Scan.Size(), c.mod) {
					// Copied whole: the connection is mapped from the log
					// itself, through a link where the copy goes, while the
					// copy made during the scan finishes (earlyCopy.finish).
					used = true
				} else if used, err = c.early.use(dst, c.Scan.Size()); err != nil {
					// Copied whole: the copy made during the scan, if it is whole.
					return nil, err
				}
			}
			if !used {
				c.early.discard()
				if changed, err = importWireScanned(c.Path, dst, c.Scan); err != nil {
					return nil, err
				}
			}
			c.Path = dst
			if c.Scan != nil {
				c.Scan = c.Scan.ForCopy(dst)
			}
			if changed {
				c.Scan = nil // the copy is scrubbed: its pipeline reads it
			}
		}
		res.Bytes += c.Size
	}

	prog := newProgress(o.Progress, len(todo), res.Bytes)
	stale := map[string]int{}
	for i, c := range todo {
		if err := ctx.Err(); err != nil {
			prog.end()
			return nil, fmt.Errorf("interrupted after %d of %d connections; the store is unchanged: %w", i, len(todo), err)
		}
		var frames uint64
		if c == adopted.connOf() {
			adopted.take(o, res, stale)
			frames, err = adopted.frames, adopted.mapErr
		} else {
			frames, err = mapConn(ctx, o, st2, c, res, stale, want, nil, nil)
		}
		res.Frames += frames
		res.Connections++
		prog.step(c.Size, frames)
		if err != nil {
			prog.end()
			if ctx.Err() != nil {
				return nil, fmt.Errorf("interrupted after %d of %d connections; the store is unchanged: %w", i, len(todo), ctx.Err())
			}
			return nil, fmt.Errorf("%s: %w; the store is unchanged", c.Shown, err)
		}
	}
	prog.end()
	if afterMapping != nil {
		afterMapping()
	}
	for _, c := range todo {
		if err := c.early.finish(); err != nil {
			return nil, fmt.Errorf("%s: %w; the store is unchanged", c.Shown, err)
		}
	}
	for _, s := range sortedKeys(res.Stale) {
		more := ""
		if n := stale[s]; n > 1 {
			more = fmt.Sprintf(" (and %d later connection%s)", n-1, plural(n-1))
		}
		fmt.Fprintf(o.Err, "acptap rebuild: session %q: stale session entry%s: %s; continued from what this rebuild produced\n", s, more, res.Stale[s])
	}

	res.Suffix = prevSuffix(o.Now())
	var j journal
	j.Suffix = res.Suffix
	for _, s := range sortedKeys(want) {
		files, err := outputFiles(o.Store, s)
		if err != nil {
			return nil, err
		}
		if !sameStamps(before[s], stamps(files)) {
			problem("session %q not rebuilt: its files changed while the rebuild ran (is it being recorded?)", s)
			res.NotRebuilt[s] = "changed during the rebuild"
			continue
		}
		made, err := outputFiles(st2, s)
		if err != nil {
			return nil, err
		}
		produced := map[string]bool{}
		for _, f := range made {
			rel, _ := filepath.Rel(staging, f)
			to := filepath.Join(root, rel)
			produced[to] = true
			j.Moves = append(j.Moves, move{From: f, To: to})
			if same, _ := sameBytes(f, to); !same {
				if _, err := os.Stat(to); err == nil {
					res.Replaced = append(res.Replaced, rel)
				}
			}
		}
		for _, f := range files {
			if !produced[f] {
				rel, _ := filepath.Rel(root, f)
				j.Moves = append(j.Moves, move{To: f})
				res.Replaced = append(res.Replaced, rel)
			}
		}
		res.Written = append(res.Written, s)
	}
	for _, c := range todo {
		if c.Import {
			j.Moves = append(j.Moves, move{From: c.Path, To: o.Store.WirePath(c.ID())})
		}
	}
	ok = true // from here the journal decides: a failed apply is finished by the next rebuild
	if err := commit(staging, j); err != nil {
		return nil, fmt.Errorf("%w (the next rebuild finishes the swap)", err)
	}
	res.Elapsed = time.Since(started)
	report(o.Out, res)
	return res, nil
}

// knownConnections scans every wire log under <root>/wire.
func knownConnections(root string, problem func(string, ...any)) ([]*Conn, map[string]*Conn) {
	byID := map[string]*Conn{}
	paths, err := storeWire(store.WireDir(root))
	if err != nil {
		problem("%s", err)
	}
	var conns []*Conn
	scans := scanAll(paths)
	for i, p := range paths {
		c, err := scans[i].c, scans[i].err
		if err != nil {
			problem("%s: %s (its sessions are rebuilt without it)", p, err)
			continue
		}
		if have := byID[c.ID()]; have != nil {
			problem("%s: connection %s again (first in %s); this copy is not used", p, c.ID(), have.Path)
			continue
		}
		byID[c.ID()] = c
		conns = append(conns, c)
	}
	return conns, byID
}

type scanned struct {
	c   *Conn
	err error
}

// scanWorkers is how many wire logs scanAll scans at once.
var scanWorkers = runtime.GOMAXPROCS(0)

// scanAll scans the logs, scanWorkers at a time (each scan is one core's
// work, and the logs are independent); the results are in paths' order.
func scanAll(paths []string) []scanned {
	out := make([]scanned, len(paths))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(scanWorkers, len(paths)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(paths) {
					return
				}
				out[i].c, out[i].err = scanConn(paths[i])
			}
		}()
	}
	wg.Wait()
	return out
}

// closure is every connection that names one of the sessions, and every
// connection naming a session those name, and so on: each session a
// mapped connection names must have its earlier connections mapped too,
// or it would be given the wrong prior state (a fork's parent, say).
func closure(conns []*Conn, want map[string]bool) []*Conn {
	sessions := map[string]bool{}
	for s := range want {
		sessions[s] = true
	}
	in := map[*Conn]bool{}
	for changed := true; changed; {
		changed = false
		for _, c := range conns {
			if in[c] || !slices.ContainsFunc(c.Sessions, func(s string) bool { return sessions[s] }) {
				continue
			}
			in[c], changed = true, true
			for _, s := range c.Sessions {
				sessions[s] = true
			}
		}
	}
	var out []*Conn
	for _, c := range conns {
		if in[c] {
			out = append(out, c)
		}
	}
	return out
}

var wireRef = regexp.MustCompile(`"ref":\{"wire":"([^"\\]*)"`)

// unknownWire returns a wire log that the session's existing ASR streams
// have records from (native.ref.wire) but that is not among known: the
// outputs hold history this rebuild cannot re-derive.
func unknownWire(st *store.Store, id string, known map[string]bool) (string, error) {
	files, err := outputFiles(st, id)
	if err != nil {
		return "", err
	}
	for _, f := range files {
		if !strings.HasSuffix(f, ".asr.jsonl") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		for _, m := range wireRef.FindAllSubmatch(b, -1) {
			if !known[string(m[1])] {
				return string(m[1]), nil
			}
		}
	}
	return "", nil
}

// storedConnections reads sessions/<id>/connections: how many connections
// observed the session when it was recorded or last rebuilt (0 if none).
func storedConnections(st *store.Store, id string) (int, error) {
	b, err := os.ReadFile(filepath.Join(st.SessionDir(id), "connections"))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("bad connection count %q", b)
	}
	return n, nil
}

// afterMapping, when set, is called once every connection is mapped, before
// the copies of the logs mapped from outside the store are put in place
// (tests).
var afterMapping func()

// offlineBatch is the least frames a batch of the rebuild holds
// (pipeline.OfflineBatchFrames; 0: the configured batch_frames, as before:
// tests compare).
var offlineBatch = pipeline.OfflineBatchFrames

// stagingBuffer is how many bytes of lines each staging file gathers
// before a write (storesink.Sink.Buffer): the staging store is read only
// by later connections of the rebuild, after this one's sink is closed,
// and swapped in after every sink is. 0 writes each line at once (tests
// compare).
var stagingBuffer = 64 << 10

// mapConn maps one connection into the staging store. want nil: every
// session is wanted; named and problem, when set, hear of each session as
// the mapping first names it and of each read problem.
func mapConn(ctx context.Context, o Options, st2 *store.Store, c *Conn, res *Result, stale map[string]int, want map[string]bool,
	named func(string), problem func(wire.Problem)) (uint64, error) {
	sink := storesink.New(st2, o.Pipeline.Logger)
	sink.Buffer = stagingBuffer
	po := o.Pipeline
	po.WirePath, po.Connection, po.Agent, po.Mode = c.Path, c.ID(), c.Header.Agent.Command, sdk.ModeRebuild
	po.Sink, po.Sessions, po.ResolveSessions = sink, storesink.Sessions{St: st2}, true
	po.Scan = c.Scan
	po.BatchFrames = max(po.BatchFrames, offlineBatch)
	if o.Routing != nil {
		po.Routing = o.Routing(c.Header.Agent.Command)
	}
	po.OnSession = func(pt pipeline.SessionPoint) {
		if named != nil {
			named(pt.ID)
		}
		if pt.Entry == nil || pt.Entry.Equal(pt.Resolved) || want != nil && !want[pt.ID] {
			return
		}
		stale[pt.ID]++
		if _, seen := res.Stale[pt.ID]; !seen {
			res.Stale[pt.ID] = fmt.Sprintf("connection %s (%s, the entry at seq %d) says %s, this rebuild produced %s",
				c.ID(), c.Shown, pt.Seq, counts(*pt.Entry), counts(pt.Resolved))
		}
	}
	po.OnReadProblem = func(p wire.Problem) {
		if problem != nil {
			problem(p)
		}
		switch {
		case p.Torn:
			res.Torn++
			fmt.Fprintf(o.Err, "acptap rebuild: %s:%d: torn tail, not mapped: %s\n", c.Shown, p.Line, p.Reason)
		case p.Skipped:
			res.SkippedLines++
			res.Failed = true
			fmt.Fprintf(o.Err, "acptap rebuild: %s:%d: line skipped: %s\n", c.Shown, p.Line, p.Reason)
		default:
			res.LostEntries += p.Missing
			res.Failed = true
			fmt.Fprintf(o.Err, "acptap rebuild: %s:%d: %s; mapped as a gap\n", c.Shown, p.Line, p.Reason)
		}
	}
	p := pipeline.New(po)
	if err := p.Rebuild(ctx); err != nil {
		sink.Close()
		return 0, err
	}
	stats, werr := p.Wait()
	serr := sink.Close()
	if c.unplanned {
		c.Sessions = uniq(stats.Sessions) // in the order named, as the scan gives them
	}
	n := sink.Counts()
	fmt.Fprintf(o.Out, "%s: revision %s, %d frames → %d ASR records, %d AEP events, sessions %s\n",
		c.Shown, stats.Revision, stats.Frames, n[sdk.ASRRecord.String()]+n[sdk.ASRHeader.String()], n[sdk.AEPEvent.String()],
		strings.Join(c.Sessions, ", "))
	var errs []error
	for _, e := range []error{werr, serr} {
		if e != nil {
			errs = append(errs, e)
		}
	}
	if sink.GaveUp() {
		errs = append(errs, errors.New("a plugin gave up before the end of the wire log (see the log)"))
	}
	return stats.Frames, errors.Join(errs...)
}

// counts renders a session entry's counts.
func counts(s wire.Session) string {
	out := fmt.Sprintf("connections %d, priorLines %d, aepLines %d", s.Connections, s.PriorLines, s.AEPLines)
	for _, k := range sortedKeys(s.PluginLines) {
		out += fmt.Sprintf(", pluginLines[%s] %d", k, s.PluginLines[k])
	}
	return out
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func report(w io.Writer, r *Result) {
	secs := r.Elapsed.Seconds()
	mbs := 0.0
	if secs > 0 {
		mbs = float64(r.Bytes) / 1e6 / secs
	}
	fmt.Fprintf(w, "rebuilt %d sessions from %d connections: %d frames, %.1f MB in %.2f s (%.1f MB/s); %d files changed\n",
		len(r.Written), r.Connections, r.Frames, float64(r.Bytes)/1e6, secs, mbs, len(r.Replaced))
	for _, f := range r.Replaced {
		fmt.Fprintf(w, "  %s (previous kept as %s%s)\n", f, f, r.Suffix)
	}
	if r.SkippedLines > 0 || r.LostEntries > 0 {
		fmt.Fprintf(w, "  %d wire log line%s skipped, %d entr%s lost (mapped as gaps)\n", r.SkippedLines, plural(r.SkippedLines),
			r.LostEntries, map[bool]string{true: "y", false: "ies"}[r.LostEntries == 1])
	}
}
