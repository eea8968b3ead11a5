package aepreceiver

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/acptap/acptap/sdk/aep"
)

// maxLine bounds one stored line when reading the store back.
const maxLine = 64 << 20

// Resume is a resume position (AEP-0003 §7): deliver strictly after
// (Epoch, Seq) of Session.
type Resume struct {
	Session string `json:"session"`
	Epoch   int64  `json:"epoch"`
	Seq     int64  `json:"seq"`
}

// ParseEventID parses an SSE id, {session}:{epoch}:{seq}; the session
// may itself hold colons, so the numbers are taken from the right.
func ParseEventID(id string) (Resume, error) {
	j := strings.LastIndexByte(id, ':')
	if j <= 0 {
		return Resume{}, fmt.Errorf("event id %q is not {session}:{epoch}:{seq}", id)
	}
	i := strings.LastIndexByte(id[:j], ':')
	if i <= 0 {
		return Resume{}, fmt.Errorf("event id %q is not {session}:{epoch}:{seq}", id)
	}
	epoch, err1 := strconv.ParseInt(id[i+1:j], 10, 64)
	seq, err2 := strconv.ParseInt(id[j+1:], 10, 64)
	if err1 != nil || err2 != nil || epoch < 0 || seq < 0 {
		return Resume{}, fmt.Errorf("event id %q is not {session}:{epoch}:{seq}", id)
	}
	return Resume{Session: id[:i], Epoch: epoch, Seq: seq}, nil
}

// EventID is the SSE id of a session-scoped event with a seq.
func EventID(session string, epoch, seq int64) string {
	return session + ":" + strconv.FormatInt(epoch, 10) + ":" + strconv.FormatInt(seq, 10)
}

// replayPart is what one session file contributes to a replay: its
// entries after the resume position, as indexed when the subscription
// began (so replay and live delivery neither overlap nor leave a gap).
type replayPart struct {
	path, session string
	entries       []entry
	// exhausted is set when the position predates the buffer; earliest is
	// then the first position held.
	exhausted bool
	earliest  position
}

// plan lists what to replay: every held session from its earliest event
// (all), or each resume position's session strictly after it. The
// store's lock is held.
func (s *eventStore) plan(all bool, from []Resume) []replayPart {
	var out []replayPart
	if all {
		for _, ix := range s.index {
			out = append(out, replayPart{path: ix.path, session: ix.session, entries: append([]entry(nil), ix.entries...)})
		}
		return out
	}
	for _, r := range from {
		at := position{r.Epoch, r.Seq}
		s.reindex(r.Session)
		for _, ix := range s.index {
			if ix.session != r.Session || len(ix.entries) == 0 {
				continue
			}
			start := 0
			for i, e := range ix.entries {
				if e.hasPos && !at.less(e.pos) {
					start = i + 1
				}
			}
			p := replayPart{path: ix.path, session: ix.session, entries: append([]entry(nil), ix.entries[start:]...)}
			if first := firstPos(ix.entries); start == 0 && ix.trimmed && first != nil && at.less(*first) {
				p.exhausted, p.earliest = true, *first
			}
			out = append(out, p)
		}
	}
	return out
}

// reindex indexes again, from its files, a session dropped from memory
// (beyond maxSessions), so a consumer resuming in it is served from the
// stored log.
func (s *eventStore) reindex(session string) {
	paths, _ := filepath.Glob(filepath.Join(s.root, "*", aep.FileName(session)+".jsonl"))
	for _, p := range paths {
		if _, ok := s.index[p]; !ok {
			if _, _, err := s.loadFile(p, nil); err != nil {
				s.log.Warn("relay store: reindex failed", "path", p, "error", err)
			}
		}
	}
}

func firstPos(es []entry) *position {
	for _, e := range es {
		if e.hasPos {
			return &e.pos
		}
	}
	return nil
}

// read calls fn with each line of the part, in order.
func (p replayPart) read(fn func(line []byte) error) error {
	if len(p.entries) == 0 {
		return nil
	}
	f, err := os.Open(p.path)
	if err != nil {
		return err
	}
	defer f.Close()
	var buf []byte
	for _, e := range p.entries {
		if int64(cap(buf)) < e.n {
			buf = make([]byte, e.n)
		}
		b := buf[:e.n]
		if _, err := f.ReadAt(b, e.off); err != nil {
			return fmt.Errorf("replay %s at %d: %w", p.path, e.off, err)
		}
		if err := fn(b); err != nil {
			return err
		}
	}
	return nil
}
