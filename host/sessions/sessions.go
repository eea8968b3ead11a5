package sessions

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/sdk/asr"
)

// Session is what the store holds of one session.
type Session struct {
	ID           string    `json:"id"`
	Agent        string    `json:"agent,omitempty"`
	AgentVersion string    `json:"agentVersion,omitempty"`
	Revision     string    `json:"revision,omitempty"` // the source protocol revision, e.g. "acp 1"
	Started      time.Time `json:"started"`
	LastActivity time.Time `json:"lastActivity"`
	Connections  int       `json:"connections"`
	Turns        int       `json:"turns"`    // prompts (messages with origin "prompt")
	Records      int       `json:"records"`  // lines after the header
	Losses       []string  `json:"losses"`   // declared loss categories, header and declarations
	Failures     int       `json:"failures"` // turns that ended in an error, prompts the agent refused
	Size         int64     `json:"size"`     // bytes of the session's files (streams and AEP events)
	Cwd          string    `json:"cwd,omitempty"`
	Dirs         []string  `json:"additionalDirectories,omitempty"`
	Title        string    `json:"title,omitempty"`
	Stream       string    `json:"stream"`
}

// Filter selects sessions; a zero field selects all.
type Filter struct {
	Agent string    // a substring of the agent's name
	Since time.Time // started or active at or after
	Until time.Time // started before
	Cwd   string    // the workspace's first root is Cwd or below it
}

func (f Filter) match(s Session) bool {
	if f.Agent != "" && !strings.Contains(strings.ToLower(s.Agent), strings.ToLower(f.Agent)) {
		return false
	}
	if !f.Since.IsZero() && s.LastActivity.Before(f.Since) && s.Started.Before(f.Since) {
		return false
	}
	if !f.Until.IsZero() && !s.Started.Before(f.Until) {
		return false
	}
	if f.Cwd != "" {
		c := filepath.Clean(f.Cwd)
		if s.Cwd != c && !strings.HasPrefix(s.Cwd, strings.TrimSuffix(c, "/")+"/") {
			return false
		}
	}
	return true
}

// Problem is a session that could not be summarised.
type Problem struct {
	ID  string
	Err error
}

// List summarises every session of st that f selects, newest activity
// first; sessions that cannot be read are returned as problems.
func List(st *store.Store, f Filter) ([]Session, []Problem, error) {
	ids, err := st.Sessions()
	if err != nil {
		return nil, nil, err
	}
	var out []Session
	var probs []Problem
	for _, id := range ids {
		s, err := Summarize(st, id)
		if err != nil {
			probs = append(probs, Problem{ID: id, Err: err})
			continue
		}
		if f.match(s) {
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].LastActivity.Equal(out[j].LastActivity) {
			return out[i].LastActivity.After(out[j].LastActivity)
		}
		return out[i].ID < out[j].ID
	})
	return out, probs, nil
}

// Summarize reads the session id of st.
func Summarize(st *store.Store, id string) (Session, error) {
	s := Session{ID: id, Stream: st.StreamPath(id), Losses: []string{}}
	f, err := os.Open(s.Stream)
	if err != nil {
		return s, err
	}
	defer f.Close()
	rd := asr.NewReader(f)
	first, err := rd.Next()
	if err != nil {
		return s, fmt.Errorf("%s: %w", s.Stream, asr.ErrNotHeader)
	}
	h, err := asr.ReadHeader(first)
	if err != nil {
		return s, fmt.Errorf("%s: %w", s.Stream, err)
	}
	if h.Agent != nil {
		s.Agent, s.AgentVersion = h.Agent.Name, h.Agent.Version
	}
	if src := h.Producer.Source; src != nil {
		s.Revision = strings.TrimSpace(src.Format + " " + src.FormatVersion)
	}
	s.Started = parseTime(h.CreatedAt)
	s.LastActivity = s.Started
	addLoss := func(c string) {
		if !slices.Contains(s.Losses, c) {
			s.Losses = append(s.Losses, c)
		}
	}
	for _, c := range h.Producer.Lossy {
		addLoss(c)
	}
	if h.Workspace != nil {
		for i, r := range h.Workspace.Roots {
			switch {
			case r.Path == nil:
			case i == 0:
				s.Cwd = *r.Path
			default:
				s.Dirs = append(s.Dirs, *r.Path)
			}
		}
	}
	for {
		line, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return s, fmt.Errorf("%s: %w", s.Stream, err)
		}
		s.Records++
		var r struct {
			Type       string          `json:"type"`
			TS         string          `json:"ts"`
			ObservedAt string          `json:"observedAt"`
			Origin     string          `json:"origin"`
			Status     string          `json:"status"`
			Error      json.RawMessage `json:"error"`
			Lossy      []string        `json:"lossy"`
			Title      *string         `json:"title"`
		}
		if json.Unmarshal(line, &r) != nil {
			continue
		}
		for _, t := range []string{r.TS, r.ObservedAt} {
			if at := parseTime(t); at.After(s.LastActivity) {
				s.LastActivity = at
			}
		}
		switch {
		case r.Type == asr.TypeMessage && r.Origin == "prompt":
			s.Turns++
		case r.Type == asr.TypeDeclaration:
			for _, c := range r.Lossy {
				addLoss(c)
			}
		case r.Type == asr.TypeSessionInfo:
			s.Title = ""
			if r.Title != nil {
				s.Title = *r.Title
			}
		}
		if r.Type == asr.TypeState && len(r.Error) > 0 && string(r.Error) != "null" || r.Type == asr.AuditPrefix+asr.AuditPromptError {
			s.Failures++
		}
	}
	s.Connections = connections(st, id)
	s.Size = size(st, id)
	return s, nil
}

func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

func connections(st *store.Store, id string) int {
	b, err := os.ReadFile(filepath.Join(st.SessionDir(id), "connections"))
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// size counts the session's files: its directory's and its AEP events.
func size(st *store.Store, id string) int64 {
	var n int64
	_ = filepath.WalkDir(st.SessionDir(id), func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil && !strings.Contains(d.Name(), ".prev-") {
				n += fi.Size()
			}
		}
		return nil
	})
	if fi, err := os.Stat(st.AEPPath(id)); err == nil {
		n += fi.Size()
	}
	return n
}
