package acpv2a13

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/acptap/acptap/plugins/internal/acpasr"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// errFinished is returned when Map or Finish is called after Finish.
var errFinished = errors.New("acpv2a13: session already finished")

// translator maps one connection: each wire frame is checked against the
// alpha.13 schema and mapped by the engine as it is, or as the frames the
// engine maps in its place (acpasr.Session.MapChecked).
type translator struct {
	eng     *acpasr.Session
	pending map[pendingKey]*pending
	// bySeq counts the pending requests per frame seq (a response's
	// ReplyTo), and order keeps their keys oldest first, for the bound.
	bySeq map[uint64]int
	order []pendingKey
	out   []sdk.Output
	cur   *sdk.Frame
	done  bool
}

// pendingKey joins a response to its request: the request's seq (the
// host's ReplyTo) and its JSON-RPC id.
type pendingKey struct {
	seq uint64
	id  string
}

// pending is a request of the draft's new methods, until its response.
type pending struct {
	method, session string
	closes          bool // session/archive of a session open on the connection
}

// audited are the requests with no ASR record type: the request and its
// response are audit-only records (ASR-710) in the session's stream, of
// kind <method with "/" as "_"> and <that>_response.
var audited = map[string]bool{
	"session/archive": true, "session/unarchive": true, "session/status": true,
	"tool_call/cancel": true, "terminal/cancel": true,
}

func newTranslator(opts acpasr.Options, req sdk.StartRequest) *translator {
	return &translator{eng: acpasr.NewSession(opts, req), pending: map[pendingKey]*pending{}, bySeq: map[uint64]int{}}
}

// Map translates and maps frames in order.
func (t *translator) Map(ctx context.Context, frames []sdk.Frame) ([]sdk.Output, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if t.done {
		return nil, errFinished
	}
	var outs []sdk.Output
	// Frames the engine maps as they are go to it in runs (Map checks
	// each as MapChecked would). A frame the translator must look at
	// ends the run first, so that it sees the engine's state after every
	// earlier frame (Session.Open).
	run := 0
	flush := func(end int) error {
		if run < end {
			eo, err := t.eng.Map(ctx, frames[run:end])
			outs = append(outs, eo...)
			run = end
			return err
		}
		return nil
	}
	for i := range frames {
		f := &frames[i]
		if !t.looks(f) {
			continue
		}
		if err := flush(i); err != nil {
			return outs, err
		}
		t.cur = f
		list, same := t.safely(func() ([]acpasr.Translated, bool) { return t.frame(f) })
		outs = append(outs, t.take()...)
		if same {
			continue // the run goes on from this frame
		}
		run = i + 1
		eo, err := t.eng.MapChecked(ctx, *f, list)
		outs = append(outs, eo...)
		if err != nil {
			return outs, err
		}
	}
	t.cur = nil
	return outs, flush(len(frames))
}

// looks reports whether the translator must parse the frame: it answers a
// request the translator follows, or it may be one the draft's additions
// need translated (marks).
func (t *translator) looks(f *sdk.Frame) bool {
	return f.Kind == sdk.KindLine && ((f.ReplyTo != 0 && t.bySeq[f.ReplyTo] > 0) || mayTranslate(f.Data))
}

// Finish ends the engine's session: every entity still open is written
// (ASR-705).
func (t *translator) Finish(ctx context.Context, reason string) ([]sdk.Output, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if t.done {
		return nil, errFinished
	}
	t.done = true
	return t.eng.Finish(ctx, reason)
}

// safely turns a panic (a translator bug) into an error diagnostic, so that
// one bad frame cannot take the plugin down; the frame is then mapped as
// it is.
func (t *translator) safely(fn func() ([]acpasr.Translated, bool)) (list []acpasr.Translated, same bool) {
	defer func() {
		if r := recover(); r != nil {
			t.diag(sdk.SeverityError, "", "internal error while translating", fmt.Sprint(r))
			list, same = []acpasr.Translated{{Frame: *t.cur}}, false
		}
	}()
	return fn()
}

func (t *translator) take() []sdk.Output {
	out := t.out
	t.out = nil
	return out
}

func (t *translator) diag(sev sdk.Severity, session, summary, detail string) {
	var seqs []uint64
	if t.cur != nil {
		seqs = []uint64{t.cur.Seq}
	}
	t.out = append(t.out, sdk.Diag(sev, session, summary, detail, seqs...))
}

// frame returns what the engine maps in the frame's place; same reports
// that it is the frame itself, unchanged.
func (t *translator) frame(f *sdk.Frame) (list []acpasr.Translated, same bool) {
	data := bytes.TrimSpace(f.Data)
	if f.Kind != sdk.KindLine || len(data) == 0 || data[0] != '{' {
		return nil, true // gaps, session frames, batches, junk: the engine's
	}
	m := f.RPC()
	if m.Kind == sdk.NotRPC || !json.Valid(data) {
		return nil, true
	}
	if m.Kind == sdk.Response || m.Kind == sdk.ErrorResponse {
		return t.response(f, m)
	}
	return t.call(f, m, m.Method)
}

// marks are the bytes a frame the translator handles must contain (a new
// method's name, a capabilities member), or that could hide them (JSON
// escapes): any other frame, while no request awaits its response, goes
// to the engine unparsed.
var marks = [][]byte{[]byte(`"capabilities"`), []byte(`session/set_title`), []byte(`session/archive`),
	[]byte(`session/unarchive`), []byte(`session/status`), []byte(`tool_call/cancel`), []byte(`terminal/cancel`),
	[]byte(`auth/status`), []byte(`"proxy/`), []byte(`\/`), []byte(`\u`)}

func mayTranslate(data []byte) bool {
	for _, m := range marks {
		if bytes.Contains(data, m) {
			return true
		}
	}
	return false
}

// params reads the members of params the translator needs (the session
// is the head's, sdk.RPC.SessionID).
type params struct {
	Update *struct {
		Kind         string          `json:"sessionUpdate"`
		Capabilities json.RawMessage `json:"capabilities"`
	} `json:"update"`
}

// call translates a request or notification.
func (t *translator) call(f *sdk.Frame, m *sdk.RPC, method string) ([]acpasr.Translated, bool) {
	var p params
	_ = json.Unmarshal(m.Params, &p)
	session := m.SessionID
	isRequest := m.ID != nil && f.Dir == sdk.C2A
	switch {
	case method == "session/update" && p.Update != nil && session != "":
		// Controls a tool call or terminal advertises: no ASR field.
		if (p.Update.Kind == "tool_call_update" || p.Update.Kind == "terminal_update") &&
			len(p.Update.Capabilities) > 0 && string(p.Update.Capabilities) != "null" {
			return []acpasr.Translated{{Frame: *f, Hint: acpasr.Hint{Session: session, Lossy: []string{asr.LossControls}}}}, false
		}
		return nil, true
	case method == "session/set_title" && isRequest:
		if session == "" {
			return nil, true // the engine reports the unknown method; the check, the bad params
		}
		t.remember(f, m, &pending{method: method, session: session})
		return nil, false // recorded from the response: the title the agent stored
	case audited[method] && isRequest:
		if session == "" {
			return nil, true
		}
		p := &pending{method: method, session: session}
		list := []acpasr.Translated{{Frame: *f, Hint: acpasr.Hint{Session: session, Audit: auditKind(method)}}}
		if method == "session/archive" && t.eng.Open(session) {
			// Archiving an active session closes it first (the draft):
			// the engine ends it as for session/close on success.
			p.closes = true
			list = append(list, acpasr.Translated{Frame: withData(f, closeRequest(m.ID, session))})
		}
		t.remember(f, m, p)
		return list, false
	case method == "auth/status" || method == "auth/status_update":
		return nil, false // connection-level, no session: not recorded (as auth/login)
	case strings.HasPrefix(method, "proxy/"):
		t.diag(sdk.SeverityInfo, "", "proxy chain message not mapped", method+": the wire log keeps it")
		return nil, false
	}
	return nil, true
}

// response translates the response to a request the translator follows.
func (t *translator) response(f *sdk.Frame, m *sdk.RPC) ([]acpasr.Translated, bool) {
	if f.ReplyTo == 0 || m.ID == nil {
		return nil, true
	}
	k := pendingKey{f.ReplyTo, string(compactJSON(m.ID))}
	p, ok := t.pending[k]
	if !ok {
		return nil, true
	}
	t.forget(k)
	if p.method == "session/set_title" {
		if m.Result == nil || m.Error != nil {
			return nil, false // not stored: the title is unchanged
		}
		var r struct {
			Title *string `json:"title"`
		}
		if json.Unmarshal(m.Result, &r) != nil || r.Title == nil {
			t.diag(sdk.SeverityWarning, p.session, "session/set_title response has no title", "the title is not recorded")
			return nil, false
		}
		return []acpasr.Translated{{Frame: withData(f, titleUpdate(p.session, *r.Title))}}, false
	}
	list := []acpasr.Translated{{Frame: *f, Hint: acpasr.Hint{Session: p.session, Audit: auditKind(p.method) + "_response"}}}
	if p.closes {
		list = append(list, acpasr.Translated{Frame: *f})
	}
	return list, false
}

// maxPending bounds the requests awaiting a response: past it the oldest
// is forgotten (its response is then mapped as the engine maps any).
const maxPending = 4096

func (t *translator) remember(f *sdk.Frame, m *sdk.RPC, p *pending) {
	k := pendingKey{f.Seq, string(compactJSON(m.ID))}
	if _, dup := t.pending[k]; !dup {
		t.bySeq[k.seq]++
		t.order = append(t.order, k)
	}
	t.pending[k] = p
	for len(t.pending) > maxPending {
		old := t.order[0]
		t.order = t.order[1:]
		if q, ok := t.pending[old]; ok {
			t.diag(sdk.SeverityWarning, q.session, "too many requests awaiting a response", q.method+": the oldest is no longer followed")
			t.forget(old)
		}
	}
	if len(t.order) > 2*maxPending {
		live := t.order[:0]
		for _, k := range t.order {
			if _, ok := t.pending[k]; ok {
				live = append(live, k)
			}
		}
		t.order = live
	}
}

func (t *translator) forget(k pendingKey) {
	delete(t.pending, k)
	if t.bySeq[k.seq]--; t.bySeq[k.seq] <= 0 {
		delete(t.bySeq, k.seq)
	}
}

// auditKind names the audit record of a method: session/archive →
// session_archive.
func auditKind(method string) string { return strings.ReplaceAll(method, "/", "_") }

func withData(f *sdk.Frame, data []byte) sdk.Frame {
	g := *f
	g.Data = data
	return g
}

func closeRequest(id json.RawMessage, session string) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": compactJSON(id), "method": "session/close",
		"params": map[string]any{"sessionId": session}})
	return b
}

func titleUpdate(session, title string) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "session/update",
		"params": map[string]any{"sessionId": session, "update": map[string]any{"sessionUpdate": "session_info_update", "title": title}}})
	return b
}

func compactJSON(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}
