package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/sdk"
)

// WireScan is what one pass over a wire log learns for a rebuild: the
// sessions it names (NamedSessions), and everything Rebuild's own first
// pass reads the log for before its feeders start — the problems a
// tolerant reader reports, the session entries and the frames that first
// name a session, the frames the revision detector looks at, the counts —
// so that a rebuild that planned with it (Options.Scan) decodes the log
// once more only, in the feeders' shared window, instead of twice.
type WireScan struct {
	// Sessions are the sessions the connection names, in order.
	Sessions []string
	// Revision is the log's last revision entry, if any: the plugins that
	// mapped the connection when it was recorded.
	Revision *wire.Revision
	// MayScrub is false when no line of the log can be one an import's
	// scrubbing (ASR-712: wire.ScrubLine) would change: every line was
	// read (none skipped, no torn tail) and every client-to-agent frame
	// whose line names mcpServers is left as it is — wire.Scrub changes
	// nothing in it (an empty list, the word in a text, a server scrubbed
	// when it was recorded), or its line is what wire.EncodeEntry writes
	// for it. A copy scrubbed line by line is then the same bytes as the
	// file.
	MayScrub bool

	path    string
	size    int64
	modTime time.Time
	events  []scanEvent
	detect  []scanLine // the frames among the first ones that the revision detector reads
	frames  uint64     // frame entries
	gapFr   uint64
	gapBy   uint64
	lastSeq uint64
}

// scanEvent is, in file order, a problem reported, a session entry, or a
// frame that names sessions first.
type scanEvent struct {
	problem *wire.Problem
	seq     uint64
	dir     sdk.Direction
	at      time.Time
	entry   *wire.Session
	names   []string
}

// scanLine is a frame the revision detector may act on, with its place
// among the frames (the detector gives up after maxDetectLines).
type scanLine struct {
	n    int
	dir  sdk.Direction
	line []byte
}

// ScanWire reads a wire log once (past bad lines, as wire.Tolerant). A
// large log is read in two halves at once (scanSplit), which give the same
// scan as one pass or are not used.
func ScanWire(path string) (*WireScan, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("open wire log: %w", err) // as wire.Open words it
	}
	if splitScan && fi.Size() >= splitMin {
		if s, ok := scanSplit(path, fi, fi.Size()/2); ok {
			return s, nil
		}
	}
	s, _, _, err := scanRange(path, fi, 0, 0)
	return s, err
}

// splitScan off: every log is scanned in one pass (tests compare);
// splitMin is the size from which a log is scanned in two halves.
var (
	splitScan       = true
	splitMin  int64 = 8 << 20
)

// scanRange scans the entry lines in the bytes [from, to) of the log (0,
// 0: all of it, as one pass; wire.OpenRange), and returns the scan, the
// sessions its tracker knew at the end and the seq of its first entry.
func scanRange(path string, fi os.FileInfo, from, to int64) (*WireScan, map[string]bool, uint64, error) {
	var r *wire.Reader
	var err error
	if from == 0 && to == 0 {
		r, err = wire.Open(path)
	} else {
		r, err = wire.OpenRange(path, from, to)
	}
	if err != nil {
		return nil, nil, 0, err
	}
	r.ReuseLines() // every line is looked at once, here
	s := &WireScan{path: path, size: fi.Size(), modTime: fi.ModTime()}
	tr := wire.NewTolerant(r, func(p wire.Problem) {
		s.events = append(s.events, scanEvent{problem: &p})
		s.MayScrub = s.MayScrub || p.Skipped || p.Torn
	})
	defer tr.Close()
	t := newSessionTracker()
	nframes := 0
	var first uint64
	for {
		e, err := tr.Next()
		if err != nil {
			if rev, ok := r.Revision(); ok {
				s.Revision = &rev
			}
			if errors.Is(err, io.EOF) {
				return s, t.known, first, nil
			}
			return s, t.known, first, fmt.Errorf("read %s: %w", path, err)
		}
		if first == 0 {
			first = e.Seq
		}
		s.lastSeq = e.Seq
		switch e.Type {
		case wire.TypeSession:
			entry := e.Session
			s.events = append(s.events, scanEvent{seq: e.Seq, dir: e.Dir, at: e.At, entry: &entry})
			if !t.known[e.Session.ID] {
				t.known[e.Session.ID] = true
				s.Sessions = append(s.Sessions, e.Session.ID)
			}
		case wire.TypeGap:
			s.gapFr += e.Gap.Frames
			s.gapBy += e.Gap.Bytes
		case wire.TypeFrame:
			// The import's scrubbing looks at the lines that name mcpServers
			// in their bytes, as they are in the file (Raw).
			if !s.MayScrub && e.Dir == sdk.C2A {
				raw := r.Raw()
				s.MayScrub = !bytes.Equal(bytes.TrimSuffix(wire.ScrubLine(raw), []byte("\n")), raw)
			}
			s.frames++
			nframes++
			if nframes <= maxDetectLines+1 && detectorReads(e.Dir, e.Line) {
				s.detect = append(s.detect, scanLine{n: nframes, dir: e.Dir, line: bytes.Clone(e.Line)})
			}
			if ids := t.scan(e.Line); len(ids) > 0 {
				s.events = append(s.events, scanEvent{seq: e.Seq, dir: e.Dir, at: e.At, names: ids})
				s.Sessions = append(s.Sessions, ids...)
			}
		}
	}
}

// scanSplit scans the log in two halves at once, split at the first line
// that starts at or after near, and merges them into what one pass gives:
// the second half's events and sessions after the first's, less what the
// first half named already. ok false, and the caller scans in one pass,
// unless the merge is sure to be that: neither half reported a problem
// (its place and what it stands for depend on what precedes it), the
// second half's first seq follows the first half's last, and the first
// half holds every frame the revision detector may read.
func scanSplit(path string, fi os.FileInfo, near int64) (*WireScan, bool) {
	mid, ok := lineStart(path, near)
	if !ok {
		return nil, false
	}
	var b *WireScan
	var bFirst uint64
	var berr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		b, _, bFirst, berr = scanRange(path, fi, mid, fi.Size())
	}()
	a, aKnown, _, aerr := scanRange(path, fi, 0, mid)
	<-done
	if aerr != nil || berr != nil || a.problems() || b.problems() || bFirst == 0 || bFirst != a.lastSeq+1 ||
		a.frames < maxDetectLines+1 {
		return nil, false
	}
	for _, ev := range b.events {
		if ev.entry == nil {
			var names []string
			for _, id := range ev.names {
				if !aKnown[id] {
					names = append(names, id)
				}
			}
			if len(names) == 0 {
				continue
			}
			ev.names = names
		}
		a.events = append(a.events, ev)
	}
	for _, id := range b.Sessions {
		if !aKnown[id] {
			a.Sessions = append(a.Sessions, id)
		}
	}
	if b.Revision != nil {
		a.Revision = b.Revision
	}
	a.MayScrub = a.MayScrub || b.MayScrub
	a.frames += b.frames
	a.gapFr += b.gapFr
	a.gapBy += b.gapBy
	a.lastSeq = b.lastSeq
	return a, true
}

// problems says whether the scan reported a problem.
func (s *WireScan) problems() bool {
	for _, ev := range s.events {
		if ev.problem != nil {
			return true
		}
	}
	return false
}

// lineStart returns the offset of the first line of the file that starts
// at or after off (after the header and within 1 MiB of off); ok false
// when there is none.
func lineStart(path string, off int64) (int64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	if off <= 0 {
		return 0, false
	}
	buf := make([]byte, 1<<20)
	fi, err := f.Stat()
	if err != nil {
		return 0, false
	}
	n, _ := f.ReadAt(buf, off-1)
	if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 && off+int64(i) < fi.Size() {
		return off + int64(i), true
	}
	return 0, false
}

// detectorReads says whether revisionDetector.observe could do more with
// the line than count it.
func detectorReads(dir sdk.Direction, line []byte) bool {
	return dir == sdk.C2A && bytes.Contains(line, []byte(`"initialize"`)) ||
		dir == sdk.A2C && bytes.Contains(line, []byte(`"id"`))
}

// Size is the file's size when it was scanned.
func (s *WireScan) Size() int64 { return s.size }

// fits says whether the scan is of the file at path as it is now: the
// path scanned (or given to ForCopy), of the same size and modification
// time.
func (s *WireScan) fits(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && path == s.path && fi.Size() == s.size && fi.ModTime().Equal(s.modTime)
}

// ForCopy returns the scan for a byte-for-byte copy of the file scanned
// (rebuild imports a wire log from outside the store; the caller knows the
// copy is the same bytes), or nil when path is not the same size.
func (s *WireScan) ForCopy(path string) *WireScan {
	fi, err := os.Stat(path)
	if err != nil || fi.Size() != s.size {
		return nil
	}
	c := *s
	c.path, c.modTime = path, fi.ModTime()
	return &c
}

// replay is Rebuild's first pass from the scan: the same calls, in the
// same order, as reading the log would make.
func (p *Pipeline) replay(s *WireScan) {
	for _, ev := range s.events {
		switch {
		case ev.problem != nil:
			if p.opts.OnReadProblem != nil {
				p.opts.OnReadProblem(*ev.problem)
			}
		case ev.entry != nil:
			e := wire.Entry{Type: wire.TypeSession, Seq: ev.seq, Dir: ev.dir, At: ev.at, Session: *ev.entry}
			p.count(e)
			if p.opts.ResolveSessions {
				p.resolve(e)
			}
		default:
			if p.opts.ResolveSessions {
				for _, id := range ev.names {
					p.tracker.known[id] = true
				}
				p.injectSessions(ev.seq, ev.names)
			}
		}
	}
	p.stats.Frames += s.frames
	p.stats.GapFrames += s.gapFr
	p.stats.GapBytes += s.gapBy
	p.wireSeq = s.lastSeq
	n := 0
	for _, l := range s.detect {
		for ; n < l.n-1 && !p.det.done; n++ {
			p.det.observe(sdk.C2A, nil) // a frame the detector only counts
		}
		if p.det.done {
			break
		}
		p.det.observe(l.dir, l.line)
		n++
	}
	for ; n < int(s.frames) && n <= maxDetectLines && !p.det.done; n++ {
		p.det.observe(sdk.C2A, nil)
	}
}

// resolveInit makes the maps. Called with sessMu held.
func (p *Pipeline) resolveInit() {
	if p.resolved == nil {
		p.resolved, p.injected = map[uint64]wire.Session{}, map[uint64][]wire.Session{}
	}
}

// observeSession asks the store about a session the connection names first
// at seq (Options.ResolveSessions), and tells OnSession.
func (p *Pipeline) observeSession(seq uint64, id string, entry *wire.Session) wire.Session {
	s := wire.Session{ID: id}
	if p.opts.Sessions != nil {
		o, err := p.opts.Sessions.Observe(id)
		if err != nil {
			p.log.Error("session state unavailable; mapping it as new", "session", id, "error", err)
		}
		s.Connections, s.PriorLines, s.PluginLines, s.AEPLines = o.Connections, o.PriorLines, o.PluginLines, o.AEPLines
	}
	if p.opts.OnSession != nil {
		p.opts.OnSession(SessionPoint{ID: id, Seq: seq, Entry: entry, Resolved: s})
	}
	return s
}

// injectSessions observes the sessions a frame names first (ids, in order)
// and announces them before it.
func (p *Pipeline) injectSessions(seq uint64, ids []string) {
	for _, id := range ids {
		s := p.observeSession(seq, id, nil)
		p.sessMu.Lock()
		p.resolveInit()
		p.injected[seq] = append(p.injected[seq], s)
		p.sessMu.Unlock()
		p.stats.Sessions = append(p.stats.Sessions, id)
	}
}
