package pipeline

import (
	"bytes"
	"encoding/json"

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

// SessionLocker is a SessionStore whose sessions are locked per process.
type SessionLocker interface {
	// Locking reports whether sessions are locked at all (not in a rebuild).
	Locking() bool
	AcquireSession(id string, stop <-chan struct{}) (bool, error)
	ForgoSession(id string)
	State(id string) (wire.Session, error)
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
	i := indexSessionKey(line, 0)
	if i < 0 {
		return nil
	}
	if indexSessionKey(line, i+len(sessionKey)) < 0 {
		if id, ok := quickID(line[i:]); ok && t.known[string(id)] {
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

// sessionKeyTail is the end of sessionKey that indexSessionKey looks for:
// 'I' is rare in JSON, where '"' (sessionKey's first byte) is everywhere.
var sessionKeyTail = sessionKey[len(sessionKey)-3:]

// indexSessionKey is bytes.Index(line[from:], sessionKey) + from. It looks for the tail's
// 'I' alone (bytes.IndexByte) and checks the rest at each: ACP lines hold a few other
// `Id"` keys (messageId, toolCallId), and bytes.Index, taking them for false starts, went
// over to its slower general search for the rest of the line.
func indexSessionKey(line []byte, from int) int {
	head := len(sessionKey) - len(sessionKeyTail)
	for from+len(sessionKey) <= len(line) {
		j := bytes.IndexByte(line[from+head:len(line)-len(sessionKeyTail)+1], sessionKeyTail[0])
		if j < 0 {
			return -1
		}
		at := from + j // where sessionKey would start
		if bytes.Equal(line[at:at+len(sessionKey)], sessionKey) {
			return at
		}
		from = at + 1
	}
	return -1
}

// trimBlanks is bytes.TrimLeft(b, " \t"), which builds its cutset's table a call: quickID
// runs on every line that names a session.
func trimBlanks(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}

// quickID reads the string after the "sessionId" line starts with: when
// it has no escapes.
func quickID(line []byte) ([]byte, bool) {
	rest := trimBlanks(line[len(sessionKey):])
	if len(rest) == 0 || rest[0] != ':' {
		return nil, false
	}
	rest = trimBlanks(rest[1:])
	if len(rest) == 0 || rest[0] != '"' {
		return nil, false
	}
	rest = rest[1:]
	j := bytes.IndexByte(rest, '"')
	if j < 0 || bytes.IndexByte(rest[:j], '\\') >= 0 {
		return nil, false
	}
	return rest[:j], true
}

// sessionInfo builds what plugin f is told of a session. Prior is the ASR
// stream the plugin continues: the primary stream for the primary plugin;
// for another plugin that writes ASR (Info.Outputs has "asr"), its own
// stream beside it (PluginLines); a plugin that writes no ASR (aep) gets
// the primary stream, for what it says of the session (ended or not).
func (p *Pipeline) sessionInfo(s wire.Session, f *feeder) sdk.SessionInfo {
	if s.Concurrent {
		s = p.awaitSession(s)
	}
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

// awaitSession waits, in a feeder, for the lock of a session another
// process was writing when this connection observed it, then returns what
// the store holds of it now, which is what the plugin continues. Capture
// goes on meanwhile (the feeder catches up from the wire log). If the
// connection ends first, the session is left to the other process: the
// sink writes nothing of it (it does not hold the lock), and the log says
// how to map it later. Feeders share one wait per session.
func (p *Pipeline) awaitSession(s wire.Session) wire.Session {
	l, ok := p.opts.Sessions.(SessionLocker)
	if !ok || !l.Locking() {
		return s // a rebuild maps the counts the connection observed
	}
	p.awaitMu.Lock()
	defer p.awaitMu.Unlock()
	if fresh, done := p.awaited[s.ID]; done {
		return fresh
	}
	if p.awaited == nil {
		p.awaited = map[string]wire.Session{}
	}
	p.log.Warn("another acptap process is writing this session; its outputs from this connection wait for it to finish",
		"session", s.ID)
	held, err := l.AcquireSession(s.ID, p.captureDone)
	if err != nil || !held {
		l.ForgoSession(s.ID)
		p.log.Error("session not written: another acptap process was writing it until this connection ended; "+
			"its frames are in this connection's wire log (acptap rebuild maps them)", "session", s.ID, "wire", p.wirePath, "error", err)
		p.awaited[s.ID] = s
		return s
	}
	fresh, err := l.State(s.ID)
	if err != nil {
		p.log.Error("session state unavailable after waiting; mapping it as observed", "session", s.ID, "error", err)
		fresh = s
	}
	fresh.Connections, fresh.Concurrent = s.Connections, true
	p.log.Info("session lock acquired; mapping continues the stream as the other process left it", "session", s.ID, "priorLines", fresh.PriorLines)
	p.awaited[s.ID] = fresh
	return fresh
}

// NamedSessions returns the sessions a wire log's connection names, in the
// order it first names them: at its session entries or, in a log without
// them, at the frames a live run would have written them before (the same
// rule as live capture). It reads past bad lines (wire.Tolerant).
func NamedSessions(path string) ([]string, error) {
	s, err := ScanWire(path)
	if s == nil {
		return nil, err
	}
	return s.Sessions, err
}
