package storesink

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/pipeline"
	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

type streamKey struct {
	plugin  string
	session string
	aep     bool
}

// Sink writes plugin outputs into the store: the primary plugin's ASR
// records to sessions/<id>/stream.asr.jsonl, another plugin's ASR records to
// sessions/<id>/<plugin>.asr.jsonl, AEP events to aep/acp/<id>.jsonl, and
// diagnostics to the log.
type Sink struct {
	st  *store.Store
	log hclog.Logger
	// ReplaceExisting moves an existing file aside (to <file>.prev-<unix
	// nanoseconds>) instead of appending to it: rebuild uses it.
	ReplaceExisting bool
	// Truncate cuts each file the connection writes back, in place, to the
	// lines it continues (its wire-log session entry's counts; none for a
	// session it started) before writing: the finisher redoes a connection
	// whose mapping stopped part-way, so what was written of it before is
	// replaced, never duplicated (host/finisher).
	Truncate bool
	// Clock for backup names (tests pin it).
	Now func() time.Time
	// Forward, when set, receives every AEP event once it is written to its
	// JSONL file (the HTTP binding's outbox). It is called with the sink's
	// lock held and must not block.
	Forward EventForwarder

	// Locks, when set, are the session locks of this process: the sink
	// writes a session's files only while it holds the session's lock
	// (taking it if it is free), and Close releases them. Outputs for a
	// session another process holds are dropped, counted and logged.
	Locks *store.SessionLocks

	// MaxOpen bounds the files the sink holds open at once (0:
	// DefaultMaxOpen); the least recently written one is released first
	// and reopened when its next line comes.
	MaxOpen int

	// Buffer, when > 0, makes every file the sink writes gather its lines
	// and write them Buffer bytes at a time (store.StreamWriter.SetBuffer)
	// instead of one write per line: for a connection mapped offline
	// (rebuild's staging store, convert), whose files are read back only
	// for what they held before its outputs — a session is observed before
	// its first output, and only the lines observed then are read as its
	// prior streams; a rebuild's next connection reads them after this
	// sink is closed. Close (and Release) write what is gathered.
	Buffer int

	mu      sync.Mutex
	writers map[streamKey]*store.StreamWriter
	open    map[streamKey]uint64 // writers holding a descriptor → last use
	busy    map[string]int       // outputs dropped per session another process holds
	tick    uint64
	diags   map[string]int
	counts  map[string]int
	errs    []error
	gaveUp  bool
	moved   []string
	paths   []string
	cont    map[streamKey]int // lines a rebuild continues, by stream (plugin "" for the primary)
	closed  bool              // after Close: outputs are dropped (a finisher redoes them)
}

// Continue says what the session's files held when the connection being
// rebuilt started (its wire-log session entry): the primary stream's
// lines, each other plugin's, and the AEP file's events. A rebuild
// continues those lines instead of replacing them.
func (s *Sink) Continue(sess wire.Session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cont == nil {
		s.cont = map[streamKey]int{}
	}
	if sess.PriorLines > 0 {
		s.cont[streamKey{session: sess.ID}] = sess.PriorLines
	}
	if sess.AEPLines > 0 {
		s.cont[streamKey{session: sess.ID, aep: true}] = sess.AEPLines
	}
	for plugin, n := range sess.PluginLines {
		if n > 0 {
			s.cont[streamKey{session: sess.ID, plugin: plugin}] = n
		}
	}
}

var _ pipeline.Sink = (*Sink)(nil)

// EventForwarder takes AEP events beyond the store.
type EventForwarder interface {
	Event(session string, event []byte)
}

// New returns a sink over st.
func New(st *store.Store, log hclog.Logger) *Sink {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &Sink{st: st, log: log, writers: map[streamKey]*store.StreamWriter{},
		diags: map[string]int{}, counts: map[string]int{}}
}

// DefaultMaxOpen is Sink.MaxOpen's default: with a stream and an AEP
// file per session, 600 sessions on one connection would otherwise need
// 1200 descriptors (ulimit -n is often 1024, or 256 on macOS).
const DefaultMaxOpen = 64

// use marks k's writer as about to write, releasing the least recently
// used open writers beyond MaxOpen. Called with s.mu held.
func (s *Sink) use(k streamKey) {
	if s.open == nil {
		s.open = map[streamKey]uint64{}
	}
	s.tick++
	s.open[k] = s.tick
	max := s.MaxOpen
	if max <= 0 {
		max = DefaultMaxOpen
	}
	for len(s.open) > max {
		var oldest streamKey
		first := true
		for ok, t := range s.open {
			if ok != k && (first || t < s.open[oldest]) {
				oldest, first = ok, false
			}
		}
		if w := s.writers[oldest]; w != nil {
			if err := w.Release(); err != nil {
				s.errs = append(s.errs, err)
			}
		}
		delete(s.open, oldest)
	}
}

func (s *Sink) writer(k streamKey, primary bool) (*store.StreamWriter, error) {
	if w, ok := s.writers[k]; ok {
		s.use(k)
		return w, nil
	}
	if s.Locks != nil {
		ok, err := s.Locks.TryAcquire(k.session)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, store.ErrSessionBusy
		}
	}
	s.use(k) // before opening: make room for the descriptor
	path := s.st.AEPPath(k.session)
	if !k.aep {
		path = s.st.StreamPath(k.session)
		if !primary {
			path = s.st.PluginStreamPath(k.session, k.plugin)
		}
	}
	keep := 0
	switch {
	case k.aep:
		keep = s.cont[streamKey{session: k.session, aep: true}]
	case primary:
		keep = s.cont[streamKey{session: k.session}]
	default:
		keep = s.cont[streamKey{session: k.session, plugin: k.plugin}]
	}
	if s.Truncate {
		if err := truncateLines(path, keep, s.log); err != nil {
			return nil, err
		}
	} else if s.ReplaceExisting {
		if st, err := os.Stat(path); err == nil && st.Size() > 0 && !s.continues(path, keep) {
			now := time.Now
			if s.Now != nil {
				now = s.Now
			}
			backup := fmt.Sprintf("%s.prev-%d", path, now().UnixNano())
			if err := os.Rename(path, backup); err != nil {
				return nil, fmt.Errorf("move existing %s aside: %w", path, err)
			}
			s.moved = append(s.moved, backup)
			if keep > 0 {
				if err := copyLines(backup, path, keep); err != nil {
					return nil, err
				}
			}
		}
	}
	var (
		w   *store.StreamWriter
		rep *store.Repair
		err error
	)
	switch {
	case k.aep:
		w, rep, err = s.st.OpenAEP(k.session)
	case primary:
		w, rep, err = s.st.OpenStream(k.session)
	default:
		w, rep, err = s.st.OpenPluginStream(k.session, k.plugin)
	}
	if err != nil {
		delete(s.open, k)
		return nil, err
	}
	if rep != nil {
		s.log.Warn("torn tail repaired: the bytes after the last LF were moved aside", "file", rep.Path, "bytes", rep.Bytes, "backup", rep.Backup)
	}
	if s.Buffer > 0 {
		w.SetBuffer(s.Buffer)
	}
	s.writers[k] = w
	s.paths = append(s.paths, w.Path())
	return w, nil
}

// continues reports whether the file holds exactly keep lines, the prior
// state a rebuilt connection continues.
func (s *Sink) continues(path string, keep int) bool {
	if keep == 0 {
		return false
	}
	n, err := countLines(path)
	if err != nil {
		return false
	}
	if n < keep {
		s.log.Warn("the stream has fewer lines than the rebuilt connection started with; continuing it", "file", path, "want", keep, "have", n)
		return true
	}
	return n == keep
}

// Output implements Sink.
func (s *Sink) Output(plugin string, primary bool, o sdk.Output) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return // handed over: the finisher writes the whole connection again
	}
	switch o.Kind {
	case sdk.Diagnostic:
		s.diags[o.Severity.String()]++
		args := []any{"plugin", plugin, "session", o.Session, "frames", o.FrameSeqs}
		if o.Detail != "" {
			args = append(args, "detail", o.Detail)
		}
		switch o.Severity {
		case sdk.SeverityError:
			s.log.Error(o.Summary, args...)
		case sdk.SeverityWarning:
			s.log.Warn(o.Summary, args...)
		default:
			s.log.Info(o.Summary, args...)
		}
		return
	case sdk.ASRHeader, sdk.ASRRecord, sdk.AEPEvent:
	default:
		s.log.Warn("plugin output of a kind the recorder does not store", "plugin", plugin, "kind", o.Kind.String())
		return
	}
	if o.Session == "" {
		s.log.Warn("plugin output without a session dropped", "plugin", plugin, "kind", o.Kind.String())
		s.diags["dropped"]++
		return
	}
	k := streamKey{plugin: plugin, session: o.Session, aep: o.Kind == sdk.AEPEvent}
	w, err := s.writer(k, primary)
	if err == nil {
		if o.Kind == sdk.ASRHeader && w.Lines() > 0 {
			s.log.Warn("stream already exists; appending to it", "plugin", plugin, "session", o.Session)
		}
		err = w.WriteLine(o.JSON)
	}
	if errors.Is(err, store.ErrSessionBusy) {
		if s.busy == nil {
			s.busy = map[string]int{}
		}
		if s.busy[o.Session]++; s.busy[o.Session] == 1 {
			s.log.Error("outputs for a session another acptap process is writing are not written; this connection's frames of it are in its wire log",
				"plugin", plugin, "session", o.Session)
		}
		return
	}
	if err != nil {
		s.errs = append(s.errs, fmt.Errorf("plugin %s session %s: %w", plugin, o.Session, err))
		s.log.Error("output not written", "plugin", plugin, "session", o.Session, "kind", o.Kind.String(), "error", err)
		return
	}
	s.counts[o.Kind.String()]++
	if o.Kind == sdk.AEPEvent && s.Forward != nil {
		s.Forward.Event(o.Session, o.JSON)
	}
}

// Gap implements Sink: every ASR stream the plugin writes gets a
// declaration record naming the unmapped frames.
func (s *Sink) Gap(plugin string, primary bool, through uint64, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.gaveUp = true
	for k, w := range s.writers {
		if k.plugin != plugin || k.aep || w.Lines() == 0 {
			continue
		}
		s.use(k)
		seq := w.Lines() // the header is seq 0, so the next record's seq is the line count
		rec, _ := json.Marshal(map[string]any{
			"type": "declaration", "seq": seq, "id": fmt.Sprintf("r%d", seq),
			"lossy": []string{asr.LossUnmappedFrames},
			"_meta": map[string]any{"org.acptap/unmapped": map[string]any{
				"plugin": plugin, "mappedThroughWireSeq": through, "reason": reason}},
		})
		if err := w.WriteLine(rec); err != nil {
			s.errs = append(s.errs, err)
		}
	}
}

// GaveUp reports whether any plugin gave up.
func (s *Sink) GaveUp() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gaveUp
}

// Replaced lists the backups of files that ReplaceExisting moved aside
// (after Close: only those whose file changed).
func (s *Sink) Replaced() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.moved...)
}

// Diagnostics returns the diagnostic counts by severity.
func (s *Sink) Diagnostics() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for k, v := range s.diags {
		out[k] = v
	}
	return out
}

// Streams returns the files written, sorted.
func (s *Sink) Streams() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]string(nil), s.paths...)
	sort.Strings(out)
	return out
}

// Counts returns outputs written by kind.
func (s *Sink) Counts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for k, v := range s.counts {
		out[k] = v
	}
	return out
}

// Close closes every file; it is idempotent. Outputs that arrive after it
// are dropped: record closes the sink when it hands the connection to a
// finisher, which maps it again from the wire log.
func (s *Sink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for k, w := range s.writers {
		if err := w.Close(); err != nil {
			s.errs = append(s.errs, err)
		}
		delete(s.writers, k)
	}
	s.moved = PruneBackups(s.moved)
	for id, n := range s.busy {
		s.errs = append(s.errs, fmt.Errorf("session %s: %d outputs not written: %w", id, n, store.ErrSessionBusy))
		delete(s.busy, id)
	}
	if s.Locks != nil {
		if err := s.Locks.ReleaseAll(); err != nil {
			s.errs = append(s.errs, err)
		}
	}
	return errors.Join(s.errs...)
}
