package acpv1

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/acptap/acptap/plugins/internal/acpasr"
	"github.com/acptap/acptap/sdk"
)

// errFinished is returned when Map or Finish is called after Finish.
var errFinished = errors.New("acpv1: session already finished")

// syntheticBefore bounds the times a converter makes up for log lines
// without one (host/logimport: the Unix epoch plus the line number in
// milliseconds): a frame received before it carries no time, so its
// records get no ts (ASR-707).
var syntheticBefore = time.Date(1971, 1, 1, 0, 0, 0, 0, time.UTC)

// translator maps one connection. Each ACP v1 frame becomes the ACP v2
// frames the engine maps, with hints (acpasr.Translated); the engine's
// outputs, and the translator's own diagnostics, are the plugin's.
type translator struct {
	eng      *acpasr.Session
	sessions map[string]*session
	pending  map[pendingKey]*pending
	// prior counts the messages each session's stored stream has, for
	// sessions this connection has not named yet (derived ids continue
	// after them).
	prior map[string]int
	cur   *sdk.Frame
	wire  sdk.Frame // the frame Map is translating
	out   []sdk.Output
	done  bool
	// fast is the fast path's scratch (fast.go); slowOnly turns it off
	// (the tests that compare the two paths).
	fast     fastPath
	slowOnly bool
}

// pendingKey joins a response to its request: the request's seq (the
// host's ReplyTo) and its JSON-RPC id.
type pendingKey struct {
	seq uint64
	id  string
}

// pending is a v1 request whose response the translator needs.
type pending struct {
	method  string
	seq     uint64
	at      time.Time
	id      json.RawMessage
	session string
	prompt  *message // session/prompt: the prompt's message
	// terminal/*: the terminal, and what terminal/create asked for.
	terminal, command, cwd string
	mode                   string // session/set_mode: the mode asked for
}

func newTranslator(opts acpasr.Options, req sdk.StartRequest) *translator {
	t := &translator{
		eng:      acpasr.NewSession(opts, req),
		sessions: map[string]*session{},
		pending:  map[pendingKey]*pending{},
		prior:    map[string]int{},
	}
	return t
}

// PrepareFrames lets the plugin server prepare a batch beside its Map
// (internal/pluginwire's Preparer): the engine's first steps for the v1
// lines themselves — their tape and the v1 schema check, which follows only
// the conversation's requests — run on the server's reader goroutine while
// this one translates and maps, the critical path of a conversion (a
// conversion's other processes leave the second core idle for much of it).
func (t *translator) PrepareFrames(frames []sdk.Frame) (run func()) {
	return t.eng.PrepareSources(frames)
}

// Map translates and maps frames in order.
func (t *translator) Map(ctx context.Context, frames []sdk.Frame) ([]sdk.Output, error) {
	pre := t.eng.TakePrepared(frames) // nil unless PrepareFrames was given frames
	defer pre.Done()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if t.done {
		return nil, errFinished
	}
	var outs []sdk.Output
	for i := range frames {
		// The frame being translated is the translator's (t.wire), not a
		// copy on the heap per frame: nothing keeps it past this iteration.
		t.wire = frames[i]
		f := &t.wire
		if !f.At.IsZero() && f.At.Before(syntheticBefore) {
			f.At = time.Time{}
		}
		t.cur = f
		t.fast.pre, t.fast.preValid = pre.Tape(i)
		list := t.safely(func() []acpasr.Translated {
			if list, ok := t.fastFrame(f); ok {
				return list
			}
			return t.frame(f)
		})
		t.fast.pre, t.fast.tp = nil, nil // the engine's again (MapPrepared)
		outs = append(outs, t.take()...)
		// The v1 line itself is checked against the official v1 schema
		// (the engine's frames are translations, not the wire's).
		eo, err := t.eng.MapPrepared(ctx, pre, i, *f, list)
		t.fast.spent() // the engine copied what it keeps of list
		if err != nil {
			return outs, err
		}
		outs = append(outs, eo...)
	}
	t.cur, t.wire = nil, sdk.Frame{}
	return outs, nil
}

// Finish ends the engine's session: every entity still open is written
// (ASR-705), a prompt whose turn never ended included.
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
// one bad frame cannot take the plugin down; the frame is then not mapped.
func (t *translator) safely(fn func() []acpasr.Translated) (list []acpasr.Translated) {
	defer func() {
		if r := recover(); r != nil {
			t.diag(sdk.SeverityError, "", "internal error while translating", fmt.Sprint(r))
			list = nil
		}
	}()
	return fn()
}

func (t *translator) take() []sdk.Output {
	out := t.out
	t.out = nil
	return out
}

// diag records a translation problem against the current frame.
func (t *translator) diag(sev sdk.Severity, session, summary, detail string) {
	var seqs []uint64
	if t.cur != nil {
		seqs = []uint64{t.cur.Seq}
	}
	t.out = append(t.out, sdk.Diag(sev, session, summary, detail, seqs...))
}

// rpc is one JSON-RPC message, from the frame's head (sdk.Frame.RPC).
type rpc struct {
	id     json.RawMessage // nil for a notification
	method string
	params obj
	result obj
	isErr  bool
	errRaw json.RawMessage // the error member as sent
}

// frame translates one frame. Frames that are not ACP v1 JSON-RPC (gaps,
// session frames, lines that are not JSON) go to the engine unchanged, so
// that it maps or diagnoses them as it does for ACP v2.
func (t *translator) frame(f *sdk.Frame) []acpasr.Translated {
	pass := []acpasr.Translated{{Frame: *f}}
	switch f.Kind {
	case sdk.KindSession:
		if f.Session != nil && f.Session.ID != "" {
			if _, open := t.sessions[f.Session.ID]; !open {
				t.prior[f.Session.ID] = countMessages(f.Session.Prior)
			}
		}
		return pass
	case sdk.KindLine:
	default:
		return pass
	}
	if !utf8.Valid(f.Data) || !json.Valid(f.Data) {
		return pass
	}
	h := f.RPC()
	m := rpc{id: h.ID, method: h.Method, errRaw: h.Error}
	switch h.Kind {
	case sdk.Request, sdk.Notification:
		m.params, _ = parseObj(h.Params)
		return t.call(f, m)
	case sdk.ErrorResponse:
		m.isErr = true
	case sdk.Response:
		m.result, _ = parseObj(h.Result)
	default:
		return pass
	}
	return t.reply(f, m)
}

// remember keeps what a request's response will need.
func (t *translator) remember(f *sdk.Frame, m rpc, p *pending) {
	if m.id == nil {
		return
	}
	p.method, p.seq, p.at, p.id = m.method, f.Seq, f.At, m.id
	t.pending[pendingKey{f.Seq, compactID(m.id)}] = p
}

// session returns the translator's state of an ACP session.
func (t *translator) session(id string) *session {
	s, ok := t.sessions[id]
	if !ok {
		s = &session{id: id, count: t.prior[id]}
		delete(t.prior, id)
		t.sessions[id] = s
	}
	return s
}

// directions are the directions of the ACP v1 methods the translator acts
// on (the engine checks those it maps itself).
var directions = map[string]sdk.Direction{
	"session/load": sdk.C2A, "session/prompt": sdk.C2A, "session/set_mode": sdk.C2A,
	"session/update": sdk.A2C, "session/request_permission": sdk.A2C,
	"fs/read_text_file": sdk.A2C, "fs/write_text_file": sdk.A2C,
	"terminal/create": sdk.A2C, "terminal/output": sdk.A2C, "terminal/wait_for_exit": sdk.A2C,
	"terminal/kill": sdk.A2C, "terminal/release": sdk.A2C,
}

// call translates a request or notification.
func (t *translator) call(f *sdk.Frame, m rpc) []acpasr.Translated {
	pass := []acpasr.Translated{{Frame: *f}}
	if d, ok := directions[m.method]; ok && d != f.Dir {
		t.diag(sdk.SeverityWarning, "", "method sent in the wrong direction", m.method+" from "+f.Dir.String())
		return nil
	}
	sid, hasSession := m.params.str("sessionId")
	hasSession = hasSession && sid != ""
	switch m.method {
	case "session/load":
		// History replay: ACP v2's session/resume with replayFrom, so the
		// engine deduplicates what it already recorded (ASR-717).
		if !hasSession {
			return pass
		}
		t.session(sid).beginReplay()
		t.remember(f, m, &pending{session: sid})
		params := cloneObj(m.params)
		params["replayFrom"] = json.RawMessage(`{"type":"start"}`)
		return []acpasr.Translated{{Frame: rewrite(f, "method", rawString("session/resume"), "params", params.encode())}}
	case "session/prompt":
		// The prompt is a message with a derived id (ASR-713). ACP v2
		// answers a prompt when it is taken, v1 when its turn ends: the
		// engine is given v2's response at once, so that the prompt is
		// first in its turn, and the turn's end at v1's response.
		if !hasSession || m.id == nil {
			return pass
		}
		s := t.session(sid)
		p := &pending{session: sid, prompt: s.promptStarts()}
		s.prompt = p
		t.remember(f, m, p)
		resp := marshal(map[string]any{"jsonrpc": "2.0", "id": m.id, "result": map[string]string{"messageId": p.prompt.id}})
		taken := *f
		taken.Dir, taken.Data, taken.ReplyTo, taken.ReplyToMethod = sdk.A2C, resp, f.Seq, m.method
		return []acpasr.Translated{{Frame: *f}, t.withMessageHint(s, taken, p.prompt)}
	case "session/set_mode":
		if mode, ok := m.params.str("modeId"); ok && hasSession {
			t.remember(f, m, &pending{session: sid, mode: mode})
		}
		return nil
	case "session/update":
		if !hasSession {
			return pass
		}
		return t.update(f, m, sid)
	case "session/request_permission":
		// v1 puts the tool call at params.toolCall; v2's subject says the
		// same ({type: tool_call, toolCall}), and has no title.
		tc, ok := m.params["toolCall"]
		if !ok {
			return pass
		}
		params := cloneObj(m.params)
		delete(params, "toolCall")
		params["subject"] = obj{"type": rawString("tool_call"), "toolCall": tc}.encode()
		return []acpasr.Translated{{Frame: rewrite(f, "params", params.encode())}}
	case "fs/read_text_file", "fs/write_text_file":
		// Audit-only (ASR-710): the request, then its response, verbatim.
		if !hasSession {
			t.diag(sdk.SeverityWarning, "", m.method+" without a sessionId", "not recorded")
			return nil
		}
		t.remember(f, m, &pending{session: sid})
		return []acpasr.Translated{{Frame: *f, Hint: acpasr.Hint{Session: sid, Audit: auditKind(m.method)}}}
	case "terminal/create":
		if !hasSession {
			return nil
		}
		t.remember(f, m, terminalCreate(sid, m.params))
		return nil
	case "terminal/output", "terminal/wait_for_exit":
		id, ok := m.params.str("terminalId")
		if hasSession && ok {
			t.remember(f, m, &pending{session: sid, terminal: id})
		}
		return nil
	case "terminal/kill", "terminal/release",
		"authenticate", "logout", "session/list", "session/delete", "session/set_config_option",
		"session/cancel", "$/cancel_request", "mcp/message", "providers/list", "providers/set", "providers/disable":
		// Nothing a record holds: the exit arrives in the responses of
		// terminal/output and terminal/wait_for_exit; a cancel's effect in
		// the prompt's stopReason; the rest do not change a session.
		return nil
	}
	return pass
}

// reply translates a response.
func (t *translator) reply(f *sdk.Frame, m rpc) []acpasr.Translated {
	pass := []acpasr.Translated{{Frame: *f}}
	if f.ReplyToMethod == "initialize" {
		return t.initialized(f, m)
	}
	k := pendingKey{f.ReplyTo, compactID(m.id)}
	p, ok := t.pending[k]
	if !ok || f.ReplyTo == 0 {
		return pass
	}
	delete(t.pending, k)
	switch p.method {
	case "session/load":
		t.session(p.session).endReplay()
		return pass
	case "session/prompt":
		return t.promptAnswer(f, p, m)
	case "session/set_mode":
		if m.isErr {
			return nil
		}
		return t.modeSet(f, p)
	case "fs/read_text_file", "fs/write_text_file":
		return []acpasr.Translated{{Frame: *f, Hint: acpasr.Hint{Session: p.session, Audit: auditKind(p.method)}}}
	case "terminal/create", "terminal/output", "terminal/wait_for_exit":
		if m.isErr || m.result == nil {
			return nil
		}
		return t.terminalAnswer(f, p, m.result)
	}
	return pass
}

// initialized gives the engine v1's agentInfo as v2's info (ASR-703). v1's
// agentInfo is optional: without it the header has no agent (unless one
// is configured).
func (t *translator) initialized(f *sdk.Frame, m rpc) []acpasr.Translated {
	if m.isErr {
		return []acpasr.Translated{{Frame: *f}}
	}
	info, ok := m.result["agentInfo"]
	if !ok || !m.result.has("agentInfo") {
		t.diag(sdk.SeverityInfo, "", "initialize response has no agentInfo", "optional in ACP v1: agent.name falls back to the config or is left out")
		return nil
	}
	return []acpasr.Translated{{Frame: rewrite(f, "result", marshal(map[string]json.RawMessage{"info": info}))}}
}

// promptAnswer ends a turn at the session/prompt response (ACP v1 has no
// state_update): an idle state with the stopReason. An error response ends
// the turn with stopReason "error" and the error (the v2 row "state_update
// idle + stopReason, error → state, copied"); when it came before any
// update the prompt was not taken either: its message is withdrawn (the
// seed's "session/prompt JSON-RPC error → no record"), and the state says
// why the turn failed (e.g. "Authentication required").
func (t *translator) promptAnswer(f *sdk.Frame, p *pending, m rpc) []acpasr.Translated {
	s := t.session(p.session)
	if s.prompt == p {
		s.prompt = nil
	}
	updates := s.updates
	s.turnEnds()
	var out []acpasr.Translated
	if m.isErr && !updates {
		s.unPrompt(p.prompt)
		out = append(out, acpasr.Translated{Frame: *f, Hint: acpasr.Hint{Session: p.session, Withdraw: p.prompt.id}})
	}
	state := map[string]json.RawMessage{"sessionUpdate": rawString("state_update"), "state": rawString("idle")}
	if m.isErr {
		state["stopReason"] = rawString("error")
		state["error"] = m.errRaw
	} else if v, ok := m.result["stopReason"]; ok && len(v) > 0 && v[0] == '"' {
		state["stopReason"] = v
	}
	return append(out, acpasr.Translated{Frame: notification(*f, p.session, marshal(state))})
}

// modeSet records a mode the client set and the agent accepted, unless the
// agent already reported it (current_mode_update).
func (t *translator) modeSet(f *sdk.Frame, p *pending) []acpasr.Translated {
	s := t.session(p.session)
	if s.mode == p.mode {
		return nil
	}
	s.mode = p.mode
	u := marshal(map[string]string{"sessionUpdate": "current_mode_update", "currentModeId": p.mode})
	return []acpasr.Translated{{Frame: notification(*f, p.session, u)}}
}

// auditKind is the audit record kind of an fs method (fs/read_text_file →
// fs_read_text_file, as elicitation/complete is elicitation_complete).
func auditKind(method string) string {
	return string(bytes.ReplaceAll([]byte(method), []byte("/"), []byte("_")))
}

// rewrite returns f with top-level members of its message replaced (pairs
// of key, value); the message is split into members only here.
func rewrite(f *sdk.Frame, kv ...any) sdk.Frame {
	o, _ := parseObj(f.Data)
	if o == nil {
		o = obj{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		o[kv[i].(string)] = kv[i+1].(json.RawMessage)
	}
	out := *f
	out.Data = o.encode()
	return out
}

// dataFrame is f with other bytes, sent in direction dir.
func dataFrame(f sdk.Frame, dir sdk.Direction, data []byte) sdk.Frame {
	f.Dir, f.Data = dir, data
	return f
}

// notification is an agent → client session/update the translator made,
// on the wire seq of the frame it came from.
func notification(f sdk.Frame, session string, update json.RawMessage) sdk.Frame {
	data := obj{"jsonrpc": rawString("2.0"), "method": rawString("session/update"),
		"params": obj{"sessionId": rawString(session), "update": update}.encode()}.encode()
	return sdk.Frame{Kind: sdk.KindLine, Seq: f.Seq, Dir: sdk.A2C, At: f.At, Data: data}
}

func cloneObj(o obj) obj {
	out := make(obj, len(o)+1)
	for k, v := range o {
		out[k] = v
	}
	return out
}
