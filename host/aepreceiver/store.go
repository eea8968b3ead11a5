package aepreceiver

import (
	"container/list"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/internal/jsonl"
	"github.com/acptap/acptap/internal/private"
	"github.com/acptap/acptap/sdk/aep"
)

// AgentFile is the file of an agent's events that have no session.
const AgentFile = "_agent.jsonl"

// Path is the file an event of agent and session is appended to.
func Path(root, agent, session string) string {
	name := AgentFile
	if session != "" {
		name = aep.FileName(session) + ".jsonl"
	}
	return filepath.Join(root, aep.FileName(agent), name)
}

// eventStore appends events to <root>/<agent>/<session>.jsonl (AEP-0003
// §3.1 layout; names sanitized) through store.StreamWriter: one write per
// line, a torn tail repaired whenever a file is opened. It keeps at most
// maxOpen files open (least recently used closed first) and closes files
// idle for longer than idle. Per session it indexes the last buffer
// events (position, offset), which is the replay buffer, for at most
// maxSessions sessions (the least recently written is dropped from memory,
// and indexed again from its file when a consumer resumes in it). Not
// safe for concurrent use: the server's lock guards it.
type eventStore struct {
	root    string
	log     hclog.Logger
	maxOpen int
	idle    time.Duration
	buffer  int
	// maxSessions bounds the sessions indexed in memory.
	maxSessions int

	open   map[string]*openFile
	recent *list.List // of *sessionIndex, most recently written first
	lru    *list.List // of *openFile, most recently used at the front
	index  map[string]*sessionIndex
}

type openFile struct {
	path    string
	w       *store.StreamWriter
	size    int64
	lastUse time.Time
	elem    *list.Element
	dirty   bool // written since the last sync
}

// position is an event's place in its session: (epoch, seq).
type position struct{ epoch, seq int64 }

func (p position) less(q position) bool {
	return p.epoch < q.epoch || p.epoch == q.epoch && p.seq < q.seq
}

// entry is one indexed event of a session file.
type entry struct {
	pos    position
	hasPos bool // seq-less (foreign-emitter) events have none
	off    int64
	n      int64 // bytes, without the LF
}

// sessionIndex is the replay buffer of one session file.
type sessionIndex struct {
	path, agent, session string
	entries              []entry
	trimmed              bool // older events were evicted from the buffer
	elem                 *list.Element
}

func newEventStore(root string, log hclog.Logger, maxOpen int, idle time.Duration, buffer, maxSessions int) *eventStore {
	return &eventStore{root: root, log: log, maxOpen: maxOpen, idle: idle, buffer: buffer, maxSessions: maxSessions,
		open: map[string]*openFile{}, lru: list.New(), index: map[string]*sessionIndex{}, recent: list.New()}
}

// writer returns the open file for path, opening (and repairing) it when
// needed and closing the least recently used file beyond maxOpen.
func (s *eventStore) writer(path string) (*openFile, error) {
	if f, ok := s.open[path]; ok {
		s.lru.MoveToFront(f.elem)
		return f, nil
	}
	if err := private.MkdirAll(filepath.Dir(path)); err != nil {
		return nil, err
	}
	for len(s.open) >= s.maxOpen {
		s.closeFile(s.lru.Back().Value.(*openFile))
	}
	w, rep, err := store.OpenLines(path)
	if err != nil {
		return nil, err
	}
	s.logRepair(rep)
	st, err := os.Stat(path)
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	f := &openFile{path: path, w: w, size: st.Size()}
	f.elem = s.lru.PushFront(f)
	s.open[path] = f
	return f, nil
}

func (s *eventStore) logRepair(rep *store.Repair) {
	if rep != nil {
		s.log.Warn("relay store: torn tail cut (an event that was never acknowledged)",
			"path", rep.Path, "bytes", rep.Bytes, "backup", rep.Backup)
	}
}

// append writes one event. After a failed write the file is closed, so
// that its next open repairs the torn tail a short write may have left:
// no event is ever glued onto a broken line.
func (s *eventStore) append(h *aep.Header, line []byte) error {
	path := Path(s.root, h.Agent, h.Session)
	f, err := s.writer(path)
	if err != nil {
		return err
	}
	f.lastUse = time.Now()
	if err := f.w.WriteLine(line); err != nil {
		s.closeFile(f)
		return err
	}
	f.dirty = true
	off := f.size
	f.size += int64(len(line)) + 1
	if h.Session != "" {
		s.indexEvent(path, h, off, int64(len(line)))
	}
	return nil
}

// sync flushes every file written since the last sync.
func (s *eventStore) sync() error {
	var errs []error
	for _, f := range s.open {
		if f.dirty {
			f.dirty = false
			if err := f.w.Sync(); err != nil {
				errs = append(errs, err)
				s.closeFile(f)
			}
		}
	}
	return errors.Join(errs...)
}

func (s *eventStore) indexEvent(path string, h *aep.Header, off, n int64) {
	ix, ok := s.index[path]
	if !ok {
		ix = &sessionIndex{path: path, agent: h.Agent, session: h.Session}
		ix.elem = s.recent.PushFront(ix)
		s.index[path] = ix
		for len(s.index) > s.maxSessions {
			old := s.recent.Remove(s.recent.Back()).(*sessionIndex)
			delete(s.index, old.path)
		}
	} else {
		s.recent.MoveToFront(ix.elem)
	}
	e := entry{off: off, n: n}
	if h.Seq != nil {
		e.pos, e.hasPos = position{h.EpochOrZero(), *h.Seq}, true
	} else if len(ix.entries) > 0 {
		e.pos = ix.entries[len(ix.entries)-1].pos
	}
	if len(ix.entries) >= s.buffer {
		drop := len(ix.entries) - s.buffer + 1
		ix.entries = append(ix.entries[:0], ix.entries[drop:]...)
		ix.trimmed = true
	}
	ix.entries = append(ix.entries, e)
}

func (s *eventStore) closeFile(f *openFile) {
	if err := f.w.Close(); err != nil {
		s.log.Warn("relay store: close failed", "path", f.path, "error", err)
	}
	s.lru.Remove(f.elem)
	delete(s.open, f.path)
}

// closeIdle closes the files not written for longer than the idle time.
func (s *eventStore) closeIdle(now time.Time) {
	for e := s.lru.Back(); e != nil; {
		f := e.Value.(*openFile)
		e = e.Prev()
		if now.Sub(f.lastUse) < s.idle {
			break
		}
		if f.dirty {
			f.dirty = false
			_ = f.w.Sync()
		}
		s.closeFile(f)
	}
}

func (s *eventStore) close() error {
	err := s.sync()
	for _, f := range s.open {
		s.closeFile(f)
	}
	return err
}

// load replays the committed lines of every file into the stream state
// and the replay index, so dedupe, ordering and resume survive a restart.
// A torn tail is repaired (cut to a backup, logged) before anything is
// appended after it. It returns how many events it read.
func (s *eventStore) load(st *aep.Stream) (int, error) {
	n := 0
	err := filepath.WalkDir(s.root, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil || d.IsDir() || filepath.Ext(path) != ".jsonl" {
			return err
		}
		k, torn, err := s.loadFile(path, st)
		n += k
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if torn {
			w, rep, err := store.OpenLines(path)
			if err != nil {
				return err
			}
			s.logRepair(rep)
			return w.Close()
		}
		return nil
	})
	return n, err
}

// loadFile reads path's LF-terminated lines into the index, and into st
// unless it is nil; torn reports bytes after the last LF.
func (s *eventStore) loadFile(path string, st *aep.Stream) (n int, torn bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	r := jsonl.NewReader(f, maxLine)
	for {
		off := r.Offset()
		line, err := r.Next()
		if errors.Is(err, io.EOF) {
			return n, r.TailLen() > 0, nil
		}
		if err != nil {
			return n, false, err
		}
		h, err := aep.ParseHeader(line)
		if err != nil {
			continue
		}
		var canon []byte
		if st != nil {
			if canon, err = aep.CanonicalRaw(line); err != nil {
				continue
			}
		}
		if st != nil {
			_ = st.Admit(h, canon)
		}
		if h.Session != "" {
			s.indexEvent(path, h, off, int64(len(line)))
		}
		n++
	}
}
