package ui

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/acptap/acptap/host/sessions"
	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/sdk/asr"
)

// Summary is a session as the sessions page lists it.
type Summary struct {
	sessions.Session
	// Key names the session in the viewer's URLs: its ID, or, in a central
	// store, origin/ID.
	Key       string   `json:"key"`
	Origin    string   `json:"origin,omitempty"`
	ToolCalls int      `json:"toolCalls"`
	Tokens    float64  `json:"tokens,omitempty"` // context window used at the last usage summary
	Cost      float64  `json:"cost,omitempty"`
	Currency  string   `json:"currency,omitempty"`
	Duration  float64  `json:"durationSeconds"`
	Wires     []string `json:"wires"` // the wire logs its records cite, in first-cited order
	Errors    bool     `json:"hasErrors"`
}

type cached struct {
	size  int64
	mtime time.Time
	sum   Summary
}

// summaryCache keeps summaries until their stream changes, so the sessions
// page reads each stream once.
type summaryCache struct {
	m     map[string]cached
	reads map[string]*summaryRead // stream path → the read under way
}

// summary returns a session's summary, reading its stream if the cache
// has no fresh one (waiting for a read already under way).
func (s *Server) summary(key string) (Summary, error) {
	sum, _, err := s.summaryOf(key, true)
	return sum, err
}

// summaryOf returns the cached summary when it is fresh. Otherwise it
// starts reading the stream for it (one read per stream at a time) and,
// with wait, returns what that read found; without, it returns ok false at
// once and the read goes on in the background, so a page can be served
// before a long stream has been read to its end.
func (s *Server) summaryOf(key string, wait bool) (sum Summary, ok bool, err error) {
	st, id, origin, found := s.resolve(key)
	if !found {
		return Summary{}, false, fs.ErrNotExist
	}
	path := st.StreamPath(id)
	fi, err := os.Stat(path)
	if err != nil {
		return Summary{}, false, err
	}
	s.mu.Lock()
	if c, ok := s.cache.m[path]; ok && c.size == fi.Size() && c.mtime.Equal(fi.ModTime()) {
		s.mu.Unlock()
		return c.sum, true, nil
	}
	r, running := s.cache.reads[path]
	if !running {
		r = &summaryRead{done: make(chan struct{})}
		s.cache.reads[path] = r
		go func() {
			r.sum, r.err = readSummary(st, id, key, origin, path)
			s.mu.Lock()
			if r.err == nil {
				s.cache.m[path] = cached{size: fi.Size(), mtime: fi.ModTime(), sum: r.sum}
			}
			delete(s.cache.reads, path)
			s.mu.Unlock()
			close(r.done)
		}()
	}
	s.mu.Unlock()
	if !wait {
		return Summary{}, false, nil
	}
	<-r.done
	return r.sum, r.err == nil, r.err
}

// summaryRead is a read of a stream for its summary, under way.
type summaryRead struct {
	done chan struct{}
	sum  Summary
	err  error
}

// readSummary reads a session's stream whole for its summary.
func readSummary(st *store.Store, id, key, origin, path string) (Summary, error) {
	base, err := sessions.Summarize(st, id)
	if err != nil {
		return Summary{}, err
	}
	sum := Summary{Session: base, Key: key, Origin: origin}
	if err := scanExtras(path, &sum); err != nil {
		return Summary{}, err
	}
	if !sum.Started.IsZero() && sum.LastActivity.After(sum.Started) {
		sum.Duration = sum.LastActivity.Sub(sum.Started).Seconds()
	}
	sum.Errors = sum.Failures > 0
	return sum, nil
}

// scanExtras counts what the sessions page shows beyond sessions.Session.
func scanExtras(path string, sum *Summary) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	rd := asr.NewReader(f)
	wires := map[string]bool{}
	for {
		line, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		var g struct {
			Type     string                        `json:"type"`
			Native   *struct{ Ref *asr.NativeRef } `json:"native"`
			Context  *asr.ContextWindow            `json:"contextWindow"`
			Cost     *asr.Cost                     `json:"cost"`
			Supers   string                        `json:"supersedes"`
			State    string                        `json:"state"`
			ErrorVal json.RawMessage               `json:"error"`
		}
		if json.Unmarshal(line, &g) != nil {
			continue
		}
		if g.Native != nil && g.Native.Ref != nil && !wires[g.Native.Ref.Wire] {
			wires[g.Native.Ref.Wire] = true
			sum.Wires = append(sum.Wires, g.Native.Ref.Wire)
		}
		switch g.Type {
		case asr.TypeToolCall:
			if g.Supers == "" {
				sum.ToolCalls++
			}
		case asr.TypeUsageSummary:
			if g.Context != nil {
				sum.Tokens, _ = strconv.ParseFloat(string(g.Context.Used), 64)
			}
			if g.Cost != nil {
				sum.Cost, _ = strconv.ParseFloat(string(g.Cost.Amount), 64)
				sum.Currency = g.Cost.Currency
			}
		case asr.TypeState:
			if len(g.ErrorVal) > 0 && string(g.ErrorVal) != "null" {
				sum.Failures = max(sum.Failures, 1)
			}
		}
	}
	if sum.Wires == nil {
		sum.Wires = []string{}
	}
	return nil
}

// SessionList is what /api/sessions answers.
type SessionList struct {
	Sessions []Summary `json:"sessions"`
	Total    int       `json:"total"`
	Offset   int       `json:"offset"`
	Agents   []string  `json:"agents"`
	Problems []string  `json:"problems,omitempty"`
}

func (s *Server) apiSessions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	list, err := s.listSessions(q.Get("q"), q.Get("agent"), q.Get("cwd"), q.Get("since"), q.Get("until"),
		q.Get("errors") == "1", atoiDefault(q.Get("offset"), 0), atoiDefault(q.Get("limit"), 50))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	writeJSON(w, list)
}

func (s *Server) listSessions(text, agent, cwd, since, until string, errorsOnly bool, offset, limit int) (*SessionList, error) {
	keys, err := s.keys()
	if err != nil {
		return nil, err
	}
	f := sessions.Filter{Agent: agent, Cwd: cwd}
	if since != "" {
		if f.Since, err = parseDay(since); err != nil {
			return nil, err
		}
	}
	if until != "" {
		if f.Until, err = parseDay(until); err != nil {
			return nil, err
		}
		if len(until) == len("2006-01-02") {
			f.Until = f.Until.Add(24 * time.Hour) // the whole day
		}
	}
	out := &SessionList{Sessions: []Summary{}, Offset: offset}
	agents := map[string]bool{}
	var all []Summary
	for _, key := range keys {
		sum, err := s.summary(key)
		if err != nil {
			out.Problems = append(out.Problems, key+": "+oneLine(err))
			continue
		}
		if sum.Agent != "" {
			agents[sum.Agent] = true
		}
		if !f.Match(sum.Session) || (errorsOnly && !sum.Errors) {
			continue
		}
		if text != "" && !contains(sum.Stream, text) {
			continue
		}
		all = append(all, sum)
	}
	slices.SortStableFunc(all, func(a, b Summary) int {
		if c := b.LastActivity.Compare(a.LastActivity); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	out.Total = len(all)
	if offset < len(all) {
		out.Sessions = all[offset:min(len(all), offset+max(limit, 1))]
	}
	for a := range agents {
		out.Agents = append(out.Agents, a)
	}
	slices.Sort(out.Agents)
	return out, nil
}

func parseDay(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339, "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errors.New("dates are YYYY-MM-DD or RFC 3339: " + strconv.Quote(s))
}

// contains reports whether the file at path holds text, case-insensitively,
// reading it line by line (a match never spans lines: records are lines).
func contains(path, text string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	needle := bytes.ToLower([]byte(text))
	// JSON escapes quotes and backslashes; search for the text as it is
	// written inside a JSON string too.
	esc, _ := json.Marshal(strings.ToLower(text))
	escNeedle := esc[1 : len(esc)-1]
	br := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			low := bytes.ToLower(line)
			if bytes.Contains(low, needle) || bytes.Contains(low, escNeedle) {
				return true
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue // a long line: read on (a match across the cut is missed)
		}
		if err != nil {
			return false
		}
	}
}

func atoiDefault(s string, d int) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return d
	}
	return n
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }

var prevName = regexp.MustCompile(`^stream\.asr\.jsonl\.prev-[0-9]+$`)

// streamPath is the stream of session id, or one of its .prev- copies
// (alt): names are looked up in the store, never taken as paths.
func (s *Server) streamPath(key, alt string) (string, error) {
	st, id, _, ok := s.resolve(key)
	if !ok {
		return "", fs.ErrNotExist
	}
	p := st.StreamPath(id)
	if alt != "" {
		if !prevName.MatchString(alt) {
			return "", fs.ErrNotExist
		}
		p = filepath.Join(filepath.Dir(p), alt)
	}
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return "", fs.ErrNotExist
	}
	return p, nil
}

// prevCopies lists a session's .prev- copies, newest first.
func (s *Server) prevCopies(key string) []string {
	st, id, _, ok := s.resolve(key)
	if !ok {
		return nil
	}
	m, _ := filepath.Glob(filepath.Join(st.SessionDir(id), "stream.asr.jsonl.prev-*"))
	var out []string
	for _, p := range m {
		if prevName.MatchString(filepath.Base(p)) {
			out = append(out, filepath.Base(p))
		}
	}
	slices.Sort(out)
	slices.Reverse(out)
	return out
}
