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
	"strings"
	"time"

	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/sdk"
)

// Frame is one wire-log entry, decoded as far as JSON-RPC goes.
type Frame struct {
	Seq  uint64
	At   time.Time
	Dir  sdk.Direction
	Type string // wire.TypeFrame, wire.TypeGap or wire.TypeSession
	Line []byte // a frame's bytes
	Gap  sdk.Gap
	// Session is a session entry's ID, or the sessionId the frame names
	// (params.sessionId, else result.sessionId).
	Session string
	// JSON-RPC, when the line is one message (a batch: its first).
	JSON     bool
	Method   string
	ID       string // the id's JSON text; "" for a notification
	Update   string // session/update: params.update.sessionUpdate
	IsResult bool
	ErrCode  int
	ErrMsg   string
	IsError  bool
}

// Frames reads the wire log at path, calling fn for each entry in order.
func Frames(path string, fn func(hdr wire.Header, f Frame) error) (wire.Header, error) {
	r, err := wire.Open(path)
	if err != nil {
		return wire.Header{}, err
	}
	defer r.Close()
	hdr := r.Header()
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return hdr, nil
		}
		if err != nil {
			return hdr, err
		}
		f := Frame{Seq: e.Seq, At: e.At, Dir: e.Dir, Type: e.Type, Line: e.Line, Gap: e.Gap}
		switch e.Type {
		case wire.TypeSession:
			f.Session = e.Session.ID
		case wire.TypeFrame:
			decodeFrame(&f)
		}
		if err := fn(hdr, f); err != nil {
			return hdr, err
		}
	}
}

func decodeFrame(f *Frame) {
	line := f.Line
	var batch []json.RawMessage
	if json.Unmarshal(line, &batch) == nil && len(batch) > 0 {
		line = batch[0]
	}
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  struct {
			SessionID string `json:"sessionId"`
			Update    struct {
				SessionUpdate string `json:"sessionUpdate"`
			} `json:"update"`
		} `json:"params"`
		Result *struct {
			SessionID string `json:"sessionId"`
		} `json:"result"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(line, &m) != nil || m.JSONRPC == "" {
		return
	}
	f.JSON, f.Method, f.Update = true, m.Method, m.Params.Update.SessionUpdate
	if len(m.ID) > 0 && string(m.ID) != "null" {
		f.ID = string(m.ID)
	}
	f.Session = m.Params.SessionID
	if m.Result != nil {
		f.IsResult = true
		if f.Session == "" {
			f.Session = m.Result.SessionID
		}
	}
	if m.Error != nil {
		f.IsError, f.ErrCode, f.ErrMsg = true, m.Error.Code, m.Error.Message
	}
}

// Connection is what a wire log says of its connection.
type Connection struct {
	ID       string    `json:"id"`
	Wire     string    `json:"wire"`
	Agent    []string  `json:"agent,omitempty"`
	Started  time.Time `json:"started"`
	Frames   int       `json:"frames"`
	Sessions []string  `json:"sessions"` // the sessions it names, first named first
	// Failures are the error responses the agent sent, with the method of
	// the request they answer: "session/new: -32000 Authentication required".
	Failures []string `json:"failures"`
}

// ReadConnection summarises the wire log at path.
func ReadConnection(path string) (Connection, error) {
	c, _, err := readConnection(path, nil)
	return c, err
}

// errStop ends a scan early.
var errStop = errors.New("stop")

// readConnection summarises the wire log at path; when stop accepts a
// session the log names, it stops reading there and says so.
func readConnection(path string, stop func(session string) bool) (Connection, bool, error) {
	stopped := false
	c := Connection{Wire: path, Sessions: []string{}, Failures: []string{}}
	methods := map[string]string{} // c2a request id → method
	hdr, err := Frames(path, func(_ wire.Header, f Frame) error {
		if f.Type != wire.TypeFrame && f.Type != wire.TypeSession {
			return nil
		}
		if f.Type == wire.TypeFrame {
			c.Frames++
		}
		if f.Session != "" && !slices.Contains(c.Sessions, f.Session) {
			c.Sessions = append(c.Sessions, f.Session)
			if stop != nil && stop(f.Session) {
				stopped = true
				return errStop
			}
		}
		switch {
		case f.Dir == sdk.C2A && f.Method != "" && f.ID != "":
			methods[f.ID] = f.Method
		case f.Dir == sdk.A2C && f.IsError:
			c.Failures = append(c.Failures, Failure(methods[f.ID], f.ErrCode, f.ErrMsg))
		}
		return nil
	})
	c.ID, c.Agent, c.Started = hdr.Connection, hdr.Agent.Command, hdr.StartedAt.UTC()
	if errors.Is(err, errStop) {
		err = nil
	}
	return c, stopped, err
}

// Failure words a failed request: "session/new: -32000 Authentication required".
func Failure(method string, code int, msg string) string {
	if method == "" {
		method = "a request"
	}
	return fmt.Sprintf("%s: %d %s", method, code, msg)
}

// Unstarted lists the connections of st whose wire log names no session
// that has a stream (the agent refused initialize, authentication or
// session/new), newest first.
func Unstarted(st *store.Store, f Filter) ([]Connection, []Problem, error) {
	dir := store.WireDir(st.Root())
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var out []Connection
	var probs []Problem
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		hasStream := func(id string) bool {
			_, err := os.Stat(st.StreamPath(id))
			return err == nil
		}
		c, started, err := readConnection(filepath.Join(dir, e.Name()), hasStream)
		if err != nil {
			probs = append(probs, Problem{ID: e.Name(), Err: err})
			continue
		}
		if started || !f.matchConnection(c) {
			continue
		}
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Started.After(out[j].Started) })
	return out, probs, nil
}

func (f Filter) matchConnection(c Connection) bool {
	if f.Agent != "" && !strings.Contains(strings.ToLower(strings.Join(c.Agent, " ")), strings.ToLower(f.Agent)) {
		return false
	}
	if !f.Since.IsZero() && c.Started.Before(f.Since) {
		return false
	}
	if !f.Until.IsZero() && !c.Started.Before(f.Until) {
		return false
	}
	return f.Cwd == "" // a connection without a session has no workspace
}
