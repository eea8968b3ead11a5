package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/sdk"
)

// SessionStore is what the pipeline asks the store about sessions.
type SessionStore interface {
	// Observe records that this connection observes the session, and
	// returns what the store holds of it now: how many connections
	// observed it before, how many lines its primary ASR stream has
	// (header included), the same for each other plugin's own ASR stream,
	// and how many events its AEP file has. The returned Session's ID is id.
	Observe(id string) (wire.Session, error)
	// Prior returns the first n lines of the session's ASR stream that
	// plugin writes: the primary stream when plugin is "".
	Prior(id, plugin string, n int) ([][]byte, error)
}

// StoreSessions is the SessionStore over a store.
type StoreSessions struct{ St *store.Store }

// Observe implements SessionStore.
func (s StoreSessions) Observe(id string) (wire.Session, error) {
	n, err := s.St.NextConnection(id)
	if err != nil {
		return wire.Session{ID: id}, err
	}
	lines, err := s.St.ExistingRecords(id)
	if err != nil {
		return wire.Session{ID: id, Connections: n}, err
	}
	plugins, err := s.St.PluginStreams(id)
	if err != nil {
		return wire.Session{ID: id, Connections: n, PriorLines: len(lines)}, err
	}
	events, err := s.St.ExistingAEPEvents(id)
	return wire.Session{ID: id, Connections: n, PriorLines: len(lines), PluginLines: plugins, AEPLines: events}, err
}

// Prior implements SessionStore.
func (s StoreSessions) Prior(id, plugin string, n int) ([][]byte, error) {
	if n <= 0 {
		return nil, nil
	}
	var lines [][]byte
	var err error
	if plugin == "" {
		lines, err = s.St.ExistingRecords(id)
	} else {
		lines, err = s.St.ExistingPluginRecords(id, plugin)
	}
	if err != nil {
		return nil, err
	}
	if len(lines) > n {
		lines = lines[:n]
	}
	return lines, nil
}

var sessionKey = []byte(`"sessionId"`)

// sessionTracker finds the sessions a connection names: the top-level
// params.sessionId of any message and the result.sessionId of any response
// (session/new, session/fork). Other sessionId fields (session/list
// entries, update payloads) do not make a session observed.
type sessionTracker struct {
	known map[string]bool
}

func newSessionTracker() *sessionTracker { return &sessionTracker{known: map[string]bool{}} }

type sessionHead struct {
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
}

type sessionField struct {
	SessionID *string `json:"sessionId"`
}

// scan returns the sessions the line names for the first time, in order.
func (t *sessionTracker) scan(line []byte) []string {
	n := bytes.Count(line, sessionKey)
	if n == 0 {
		return nil
	}
	if n == 1 {
		if id, ok := quickID(line); ok && t.known[id] {
			return nil
		}
	}
	trim := bytes.TrimSpace(line)
	var heads []sessionHead
	if len(trim) > 0 && trim[0] == '[' {
		if json.Unmarshal(trim, &heads) != nil {
			return nil
		}
	} else {
		var h sessionHead
		if json.Unmarshal(trim, &h) != nil {
			return nil
		}
		heads = []sessionHead{h}
	}
	var found []string
	for _, h := range heads {
		for _, raw := range []json.RawMessage{h.Params, h.Result} {
			var f sessionField
			if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &f) != nil || f.SessionID == nil {
				continue
			}
			if id := *f.SessionID; !t.known[id] {
				t.known[id] = true
				found = append(found, id)
			}
		}
	}
	return found
}

// quickID reads the string after the line's only "sessionId": when it has
// no escapes.
func quickID(line []byte) (string, bool) {
	i := bytes.Index(line, sessionKey)
	rest := bytes.TrimLeft(line[i+len(sessionKey):], " \t")
	if len(rest) == 0 || rest[0] != ':' {
		return "", false
	}
	rest = bytes.TrimLeft(rest[1:], " \t")
	if len(rest) == 0 || rest[0] != '"' {
		return "", false
	}
	rest = rest[1:]
	j := bytes.IndexByte(rest, '"')
	if j < 0 || bytes.IndexByte(rest[:j], '\\') >= 0 {
		return "", false
	}
	return string(rest[:j]), true
}

// sessionInfo builds what plugin f is told of a session. Prior is the ASR
// stream the plugin continues: the primary stream for the primary plugin;
// for another plugin that writes ASR (Info.Outputs has "asr"), its own
// stream beside it (PluginLines); a plugin that writes no ASR (aep) gets
// the primary stream, for what it says of the session (ended or not).
func (p *Pipeline) sessionInfo(s wire.Session, f *feeder) sdk.SessionInfo {
	info := sdk.SessionInfo{ID: s.ID, Connections: s.Connections}
	plugin, n := "", s.PriorLines
	if f != nil && !f.primary && f.writesASR() {
		plugin, n = f.name, s.PluginLines[f.name]
	}
	if n > 0 && p.opts.Sessions != nil {
		prior, err := p.opts.Sessions.Prior(s.ID, plugin, n)
		if err != nil {
			p.log.Error("prior stream unreadable; the plugin maps the session as new", "session", s.ID, "plugin", f.name, "error", err)
		}
		if len(prior) < n {
			p.log.Warn("the stream has fewer lines than when the connection started", "session", s.ID,
				"plugin", f.name, "want", n, "have", len(prior))
		}
		info.Prior = prior
	}
	return info
}

// NamedSessions returns the sessions a wire log's connection names, in the
// order it first names them: at its session entries or, in a log without
// them, at the frames a live run would have written them before (the same
// rule as live capture). It reads past bad lines (wire.Tolerant).
func NamedSessions(path string) ([]string, error) {
	r, err := wire.Open(path)
	if err != nil {
		return nil, err
	}
	tr := wire.NewTolerant(r, nil)
	defer tr.Close()
	t := newSessionTracker()
	var ids []string
	for {
		e, err := tr.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return ids, nil
			}
			return ids, fmt.Errorf("read %s: %w", path, err)
		}
		switch e.Type {
		case wire.TypeSession:
			if !t.known[e.Session.ID] {
				t.known[e.Session.ID] = true
				ids = append(ids, e.Session.ID)
			}
		case wire.TypeFrame:
			ids = append(ids, t.scan(e.Line)...)
		}
	}
}
