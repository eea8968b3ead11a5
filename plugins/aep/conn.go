package aep

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/acptap/acptap/internal/jsonscan"
	"github.com/acptap/acptap/sdk"
)

// maxPending bounds the requests remembered while their responses are
// awaited; the oldest are forgotten first.
const maxPending = 1 << 16

type pendKey struct {
	dir sdk.Direction
	id  string
}

// pending is a request awaiting its response.
type pending struct {
	method  string
	session string
	at      time.Time
	params  obj    // only for the methods whose response reads them (keepsParams)
	run     string // v1 session/prompt: the run it opened
}

// keepsParams reports whether the mapping of a method's response reads its
// request's params (cwd, traceparent). Other requests (fs/write_text_file
// with a whole file, say) are remembered without them while they await
// their response.
func keepsParams(method string) bool {
	switch method {
	case "session/new", "session/fork", "session/load", "session/resume", "session/close", "session/delete", "session/archive":
		return true
	}
	return false
}

// conn maps one connection.
type conn struct {
	s    settings
	conn string
	v2   bool
	// archiveCloses: the revision's session/archive closes an active
	// session (alpha.13).
	archiveCloses bool
	sessions      map[string]*sess
	laneID        string
	pending       map[pendKey]*pending
	order         []pendKey
	elicit        map[string]string // URL-mode elicitationId → session
	lastAt        time.Time
	lastSeq       uint64
	outs          []sdk.Output
	finished      bool
	tape          jsonscan.Tape // the frame being mapped (fast.go)
	slowOnly      bool          // the fast path off: the differential tests
}

var _ sdk.Session = (*conn)(nil)

func newConn(s settings, req sdk.StartRequest) *conn {
	c := &conn{s: s, conn: req.Connection, v2: strings.HasPrefix(req.Input, "acp/2"), archiveCloses: req.Input == InputAlpha13,
		sessions: map[string]*sess{}, pending: map[pendKey]*pending{}, elicit: map[string]string{}}
	if s.lane {
		c.laneID = "acp-conn"
		if req.Connection != "" {
			c.laneID += "-" + req.Connection
		}
	}
	return c
}

// Map implements sdk.Session.
func (c *conn) Map(_ context.Context, frames []sdk.Frame) ([]sdk.Output, error) {
	c.outs = nil
	for i := range frames {
		c.frame(&frames[i])
	}
	return c.outs, nil
}

// Finish implements sdk.Session: pending attention requests are dismissed
// and open runs cancelled by shutdown, since the connection that could
// answer or finish them is gone.
func (c *conn) Finish(_ context.Context, reason string) ([]sdk.Output, error) {
	c.outs = nil
	if c.finished {
		return nil, nil
	}
	c.finished = true
	ref := &frameRef{seq: c.lastSeq, at: c.lastAt, tag: "finish"}
	for _, id := range sortedKeys(c.sessions) {
		st := c.sessions[id]
		var ds []*draft
		ds = append(ds, c.dismissAll(st)...)
		for _, run := range sortedKeys(st.runs) {
			ds = append(ds, c.runTerminal(st, run, "run.cancelled", "notice", obj{"by": "shutdown"}, c.lastAt))
		}
		c.stamp(ref, ds)
	}
	return c.outs, nil
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// frame maps one frame.
func (c *conn) frame(f *sdk.Frame) {
	if f.Seq > c.lastSeq {
		c.lastSeq = f.Seq
	}
	if f.At.After(c.lastAt) {
		c.lastAt = f.At
	}
	switch f.Kind {
	case sdk.KindSession:
		if f.Session != nil && f.Session.ID != "" {
			st := c.session(f.Session.ID)
			st.epoch = int64(f.Session.Connections)
			st.ended = priorEnded(f.Session.Prior)
		}
		return
	case sdk.KindGap:
		c.gap(f)
		return
	case sdk.KindLine:
	default:
		return
	}
	handled, m, err, parsed := c.fastFrame(f)
	if handled {
		return
	}
	if !parsed {
		m, err = parseMsg(f)
	}
	if err != nil {
		c.diag(sdk.SeverityWarning, "", "frame not mapped: "+err.Error(), fmt.Sprintf("%d bytes", len(f.Data)), f.Seq)
		return
	}
	ref := &frameRef{seq: f.Seq, batch: f.BatchIndex, at: f.At}
	c.stamp(ref, c.mapMsg(f, m))
}

// mapMsg maps one JSON-RPC message to drafts.
func (c *conn) mapMsg(f *sdk.Frame, m msg) []*draft {
	switch m.kind {
	case kindRequest, kindNotification:
		if m.kind == kindRequest {
			p := &pending{method: m.method, session: c.sessionOf(m.params), at: f.At}
			if keepsParams(m.method) {
				p.params = m.params
			}
			c.remember(pendKey{f.Dir, m.id}, p)
		}
		return c.request(f, m)
	default:
		if f.ReplyTo == 0 {
			c.diag(sdk.SeverityInfo, "", "response without a request", "id "+m.id, f.Seq)
			return nil
		}
		other := sdk.A2C
		if f.Dir == sdk.A2C {
			other = sdk.C2A
		}
		k := pendKey{other, m.id}
		p := c.pending[k]
		delete(c.pending, k)
		if p == nil {
			p = &pending{method: f.ReplyToMethod}
		}
		return c.response(f, m, p)
	}
}

// remember records a request awaiting its response. order has the keys in
// the order they were first remembered (the oldest are forgotten first when
// more than maxPending await), and keys already answered until the next
// compaction.
func (c *conn) remember(k pendKey, p *pending) {
	if _, dup := c.pending[k]; !dup {
		c.order = append(c.order, k)
	}
	c.pending[k] = p
	for len(c.pending) > maxPending && len(c.order) > 0 {
		delete(c.pending, c.order[0])
		c.order = c.order[1:]
	}
	// Answered keys are dropped from the order once they are half of it,
	// so that it grows with the requests awaiting a response.
	if len(c.order) > 2*len(c.pending)+64 {
		live := c.order[:0]
		for _, k := range c.order {
			if _, ok := c.pending[k]; ok {
				live = append(live, k)
			}
		}
		c.order = live
	}
}

// sessionOf is a message's session: params.sessionId.
func (c *conn) sessionOf(params obj) string {
	s, _ := str(params, "sessionId")
	return s
}

// session returns the state of a session, creating it; "" is the
// connection lane (or nothing, when the lane is off).
func (c *conn) session(id string) *sess {
	if id == "" {
		id = c.laneID
	}
	st, ok := c.sessions[id]
	if !ok {
		st = newSess(id)
		if id != "" {
			c.sessions[id] = st
		}
	}
	return st
}

// gap declares lost frames in every session of the connection.
func (c *conn) gap(f *sdk.Frame) {
	c.diag(sdk.SeverityWarning, "", "frames not observed", fmt.Sprintf("%d frames, %d bytes: %s", f.Gap.Frames, f.Gap.Bytes, f.Gap.Reason), f.Seq)
	ref := &frameRef{seq: f.Seq, at: f.At}
	for _, id := range sortedKeys(c.sessions) {
		st := c.sessions[id]
		d := c.newDraft(st, "x.acp.capture.gap", "warning")
		d.data = obj{"frames": f.Gap.Frames, "bytes": f.Gap.Bytes}
		c.stamp(ref, []*draft{d})
	}
}

// priorEnded reports whether the session's ASR stream, as the store holds
// it, records that an earlier connection ended the session (a "state"
// record with state "ended", written on session/close). A session ends at
// most once across all epochs (AEP-0002 §2 convention 5), so a later close
// of the same session adds no second session.ended.
func priorEnded(prior [][]byte) bool {
	for _, line := range prior {
		if !bytes.Contains(line, []byte(`"ended"`)) {
			continue
		}
		var r struct{ Type, State string }
		if json.Unmarshal(line, &r) == nil && r.Type == "state" && r.State == "ended" {
			return true
		}
	}
	return false
}
