package aep

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/acptap/acptap/internal/acpschema"
	"github.com/acptap/acptap/internal/jsonscan"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/aep"
)

// The fast path. Every line frame is parsed once, strictly, into a tape
// (internal/jsonscan.Tape: the spans of every member, nothing decoded), and
// mapped from it, decoding only what its mapping reads:
//
//   - a session/update notification from the agent of a content stream
//     (deltaKinds: message, thought and tool-output chunks, nearly all of a
//     session's frames) is mapped from the tape itself: its few members are
//     read where they lie, no map is built and no text decoded unless the
//     deltas opt-in writes it;
//   - one of any other kind goes through update, the map-based mapping, with
//     an update object of only the members that kind's mapping reads
//     (sparseKinds), decoded from the tape: a tool call's content and
//     locations are never decoded;
//   - any other message has its head read from the tape (tapeRPC) and its
//     params, result or error decoded only when its mapping reads them
//     (tapeMsg: paramsRead, resultRead), for the map-based mapping (mapMsg).
//
// A frame the tape refuses (a member name with an escape, a duplicate name,
// deep nesting; invalid UTF-8 or JSON) goes the map-based way whole
// (parseMsg), as every frame did before. fast_test.go checks that both
// ways give the same outputs, batch by batch, on the goldens' inputs, the
// synthetic session of the memory benchmarks, and random and mutated
// sessions (FuzzFastPath too).

// fastFrame maps f from the tape when it can (handled). When it does not,
// and the tape took f (parsed: f is valid UTF-8 and JSON), m and err are
// what parseMsg would return, the head read from the tape; otherwise the
// caller parses f.
func (c *conn) fastFrame(f *sdk.Frame) (handled bool, m msg, err error, parsed bool) {
	if c.slowOnly || !c.tape.Parse(f.Data) || !c.tape.ValidUTF8() { // the tape checks UTF-8 as it parses
		c.tape.Release()
		return false, msg{}, nil, false
	}
	if handled = c.fastUpdate(f); !handled {
		m, err = c.tapeMsg(f)
	}
	c.tape.Release() // the tape does not keep the caller's frame
	if cap(c.tape.Ents) > maxTapeKept || cap(c.tape.Conts) > maxTapeKept {
		c.tape = jsonscan.Tape{} // nor the room a large frame needed
	}
	return handled, m, err, true
}

// tapeMsg is parseMsg for the frame on the tape, decoding only what the
// mapping of the message reads: the params of a request or notification
// whose method reads nothing of them but sessionId and _meta (paramsRead)
// are those two members alone; the result or error of a response whose
// request's method reads nothing of it (resultRead), or of a response the
// mapping does not join to a request, is not decoded at all. The file of
// an fs/write_text_file request, or of an fs/read_text_file response, is
// so never decoded.
func (c *conn) tapeMsg(f *sdk.Frame) (msg, error) {
	t := &c.tape
	h := tapeRPC(t)
	switch h.Kind {
	case sdk.Request, sdk.Notification:
		if paramsRead[h.Method] || len(h.Params) == 0 || h.Params[0] != '{' {
			break
		}
		h.Params = nil
		m, err := msgOf(&h)
		if pe, ok := t.Member(t.Root(), "params"); ok {
			m.params = sparseObj(t, pe, "sessionId", "_meta")
		}
		return m, err
	case sdk.Response, sdk.ErrorResponse:
		if !c.resultRead(f, &h) {
			h.Result, h.Error = nil, nil
		}
	}
	return msgOf(&h)
}

// paramsRead are the methods whose mapping reads more of a request's or
// notification's params than sessionId and _meta (request, and the
// response of the methods whose params a pending request keeps:
// keepsParams).
var paramsRead = map[string]bool{
	"session/prompt": true, "session/update": true, "session/request_permission": true,
	"elicitation/create": true, "elicitation/complete": true,
	"session/new": true, "session/fork": true, "session/load": true, "session/resume": true,
	"session/close": true, "session/delete": true, "session/archive": true,
}

// resultRead are the methods whose response's result or error the mapping
// reads (response: every method it maps).
var resultRead = map[string]bool{
	"session/new": true, "session/fork": true, "session/load": true, "session/resume": true,
	"session/prompt": true, "session/close": true, "session/delete": true, "session/archive": true,
	"session/request_permission": true, "elicitation/create": true,
}

// resultRead reports whether the mapping of the response h reads its
// result or error: mapMsg joins it to a request as it will (the pending
// request of its id in the other direction, else the host's
// ReplyToMethod), and response reads them for the methods of resultRead.
func (c *conn) resultRead(f *sdk.Frame, h *sdk.RPC) bool {
	if f.ReplyTo == 0 {
		return false // mapMsg: "response without a request"
	}
	other := sdk.A2C
	if f.Dir == sdk.A2C {
		other = sdk.C2A
	}
	method := f.ReplyToMethod
	if p := c.pending[pendKey{other, idOf(h.ID)}]; p != nil {
		method = p.method
	}
	return resultRead[method]
}

// idOf is a JSON-RPC id's text as msg keeps it, idText of the decoded id,
// for the raw id (valid JSON). The usual ids are their own text: an
// integer of up to 15 digits (canonical JSON writes it as it is) or a
// string of printable ASCII without escapes; any other goes through
// aep.Decode. TestIDOfMatchesDecode compares the two.
func idOf(raw json.RawMessage) string {
	if plainID(raw) {
		return string(raw)
	}
	v, _ := aep.Decode(raw)
	return idText(v)
}

func plainID(raw []byte) bool {
	if len(raw) == 0 {
		return false
	}
	if raw[0] == '"' {
		if len(raw) < 2 || raw[len(raw)-1] != '"' {
			return false
		}
		for _, c := range raw[1 : len(raw)-1] {
			if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
				return false
			}
		}
		return true
	}
	if len(raw) > 15 || (raw[0] == '0' && len(raw) > 1) {
		return false
	}
	for _, c := range raw {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// tapeRPC is the JSON-RPC head sdk.Frame.RPC reads (what msgOf uses of it),
// from the tape's top level: the tape refuses duplicate and escaped member
// names, so each member is found once, as written.
func tapeRPC(t *jsonscan.Tape) sdk.RPC {
	root := t.Root()
	if root.C < 0 || t.B[root.V0] != '{' {
		return sdk.RPC{Err: sdk.ErrNotObject}
	}
	var r sdk.RPC
	var method []byte
	for _, e := range t.Entries(root) {
		v := json.RawMessage(t.Bytes(e))
		switch string(t.Key(e)) {
		case "id":
			r.ID = v
		case "method":
			method = v
		case "params":
			r.Params = v
		case "result":
			r.Result = v
		case "error":
			r.Error = v
		}
	}
	switch {
	case method != nil:
		s, ok := jsonscan.String(method)
		if !ok {
			return sdk.RPC{Err: sdk.ErrMethod}
		}
		r.Method, r.Kind = s, sdk.Notification
		if r.ID != nil {
			r.Kind = sdk.Request
		}
	case r.ID == nil:
		r.Err = sdk.ErrNotRPC
	case len(r.Error) > 0 && r.Error[0] == '{':
		r.Kind = sdk.ErrorResponse
	case r.Result != nil:
		r.Kind = sdk.Response
	default:
		r.Err = sdk.ErrNotRPC
	}
	return r
}

// maxTapeKept is the most entries the tape keeps room for between frames
// (about 20 KiB; a content-stream frame has a dozen).
const maxTapeKept = 1024

// fastUpdate maps a session/update notification of a content stream from
// the tape; it reports false, having changed nothing, for anything else.
func (c *conn) fastUpdate(f *sdk.Frame) bool {
	if f.Dir != sdk.A2C {
		return false
	}
	t := &c.tape
	root := t.Root()
	if root.C < 0 || t.B[root.V0] != '{' {
		return false
	}
	var method, params jsonscan.Ent
	hasMethod, hasParams := false, false
	for _, e := range t.Entries(root) {
		switch string(t.Key(e)) {
		case "id":
			return false // a request: remembered for its response
		case "method":
			method, hasMethod = e, true
		case "params":
			params, hasParams = e, true
		}
	}
	if !hasMethod || !hasParams || string(t.Bytes(method)) != `"session/update"` || t.B[params.V0] != '{' {
		return false
	}
	u, ok := t.Member(params, "update")
	if !ok || t.B[u.V0] != '{' {
		return false
	}
	k, ok := t.Member(u, "sessionUpdate")
	if !ok {
		return false
	}
	kind, ok := tapeName(t, k, deltaKindNames)
	sparse := false
	if !ok {
		if kind, ok = tapeName(t, k, sparseKindNames); !ok {
			if kind, ok = tapeStr(t, k); !ok {
				return false
			}
		}
		sparse = true
	}
	var st *sess
	if e, ok := t.Member(params, "sessionId"); ok {
		if raw := t.Bytes(e); len(raw) > 2 && raw[0] == '"' {
			st = c.sessions[string(raw[1:len(raw)-1])] // a known session, named without escapes: no string made
		}
		if st == nil {
			sid, _ := tapeStr(t, e)
			st = c.session(sid)
		}
	} else {
		st = c.session("")
	}
	ref := &frameRef{seq: f.Seq, batch: f.BatchIndex, at: f.At}
	if sparse {
		po := sparseObj(t, params, "sessionId", "_meta")
		keys, known := sparseKinds[kind]
		if !known {
			keys = vendorKeys // update maps any other kind to x.acp.<kind>, with no data
		}
		uo := sparseObj(t, u, keys...)
		po["update"] = uo
		c.stamp(ref, c.update(f, st, uo, po))
		return true
	}
	if st.replaying > 0 {
		return true // observeReplay keeps nothing of a content stream
	}
	ds := c.deltaTape(st, kind, u)
	if len(ds) == 0 {
		return true
	}
	tp := tapeTraceparent(t, u, params)
	for _, d := range ds {
		if d.tp == "" {
			d.tp = tp
		}
	}
	c.stamp(ref, ds)
	return true
}

// sparseKinds are the update kinds update names (but the content streams,
// deltaKinds) with the members of the update object their mapping (update,
// and observeReplay during a replay) reads; any other kind reads only
// vendorKeys. Such an update is mapped the map-based way from an object of
// those members alone, decoded from the tape: the rest of the frame (a
// tool call's content and locations, say) is never decoded. A member
// update comes to read goes here too.
var sparseKinds = map[string][]string{
	"state_update":      {"sessionUpdate", "_meta", "state", "stopReason", "error", "usage"},
	"tool_call":         {"sessionUpdate", "_meta", "toolCallId", "status", "name", "title", "kind", "rawInput", "rawOutput"},
	"tool_call_update":  {"sessionUpdate", "_meta", "toolCallId", "status", "name", "title", "kind", "rawInput", "rawOutput"},
	"plan":              {"sessionUpdate", "_meta", "entries", "plan"},
	"plan_update":       {"sessionUpdate", "_meta", "entries", "plan"},
	"usage_update":      {"sessionUpdate", "_meta", "usedTokens", "outputTokens", "used", "size", "cost"},
	"compaction_update": {"sessionUpdate", "_meta", "compactionId", "status"},
}

var vendorKeys = []string{"sessionUpdate", "_meta"}

var sparseKindNames = func() map[string]string {
	m := map[string]string{}
	for k := range sparseKinds {
		m[k] = k
	}
	return m
}()

// sparseObj is the object e holds with only the members keys, each decoded
// as decodeObj decodes it.
func sparseObj(t *jsonscan.Tape, e jsonscan.Ent, keys ...string) obj {
	o := make(obj, len(keys)+1) // room for params' update
	for _, m := range t.Entries(e) {
		k := t.Key(m)
		for _, want := range keys {
			if string(k) == want {
				o[want] = tapeValue(t, m)
				break
			}
		}
	}
	return o
}

// tapeValue decodes the value e as decodeObj decodes a member.
func tapeValue(t *jsonscan.Tape, e jsonscan.Ent) any {
	raw := t.Bytes(e)
	switch raw[0] {
	case 't':
		return true
	case 'f':
		return false
	case 'n':
		return nil
	}
	v, ok := acpschema.DecodeJSON(raw) // a string the schema names is interned: no allocation
	if !ok {
		v, _ = aep.Decode(raw)
	}
	return v
}

// deltaTape is delta for the update object u on the tape.
func (c *conn) deltaTape(st *sess, kind string, u jsonscan.Ent) []*draft {
	if !c.s.deltas {
		return nil
	}
	level := c.s.ceiling("deltas")
	if level < aep.Redacted {
		return nil
	}
	t := &c.tape
	var text string
	switch kind {
	case "terminal_output_chunk":
		if e, ok := t.Member(u, "data"); ok {
			if s, ok := tapeStr(t, e); ok {
				if b, err := base64.StdEncoding.DecodeString(s); err == nil && utf8.Valid(b) {
					text = string(b)
				}
			}
		}
	default:
		if e, ok := t.Member(u, "content"); ok {
			text = tapeTextOf(t, e)
		}
	}
	if strings.TrimSpace(text) == "" {
		return nil
	}
	d := c.newDraft(st, vendorType(kind), "debug")
	d.level = level
	if level == aep.Redacted {
		text = c.s.redactor.Text(text)
	}
	d.data = obj{"delta": text}
	if e, ok := t.Member(u, "messageId"); ok {
		if id, ok := tapeStr(t, e); ok {
			d.subject = id
		}
	}
	return []*draft{d}
}

// deltaKindNames are the names of deltaKinds, to look up without making a
// string.
var deltaKindNames = func() map[string]string {
	m := map[string]string{}
	for k := range deltaKinds {
		m[k] = k
	}
	return m
}()

// tapeName is the string e holds when it is one of names (as names holds
// it: no string is made).
func tapeName(t *jsonscan.Tape, e jsonscan.Ent, names map[string]string) (string, bool) {
	raw := t.Bytes(e)
	if raw[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		s, ok := names[string(raw[1:len(raw)-1])]
		return s, ok
	}
	s, ok := jsonscan.Text(raw)
	if !ok {
		return "", false
	}
	s, ok = names[s]
	return s, ok
}

// tapeStr decodes e when it is a string, as the map-based decoder does.
func tapeStr(t *jsonscan.Tape, e jsonscan.Ent) (string, bool) {
	if t.B[e.V0] != '"' {
		return "", false
	}
	return jsonscan.Text(t.Bytes(e))
}

// tapeMemberStr is str over the tape: the string member k of object o.
func tapeMemberStr(t *jsonscan.Tape, o jsonscan.Ent, k string) (string, bool) {
	e, ok := t.Member(o, k)
	if !ok {
		return "", false
	}
	return tapeStr(t, e)
}

// tapeTextOf is textOf over the tape.
func tapeTextOf(t *jsonscan.Tape, e jsonscan.Ent) string {
	if e.C < 0 {
		return ""
	}
	if t.B[e.V0] == '{' {
		typ, _ := tapeMemberStr(t, e, "type")
		switch typ {
		case "text":
			s, _ := tapeMemberStr(t, e, "text")
			return s
		case "content":
			if c, ok := t.Member(e, "content"); ok {
				return tapeTextOf(t, c)
			}
		}
		return ""
	}
	var parts []string
	for _, x := range t.Entries(e) {
		if s := tapeTextOf(t, x); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n")
}

// tapeTraceparent is traceparent over the tape.
func tapeTraceparent(t *jsonscan.Tape, objs ...jsonscan.Ent) string {
	for _, o := range objs {
		m, ok := t.Member(o, "_meta")
		if !ok {
			continue
		}
		if tp, ok := tapeMemberStr(t, m, "traceparent"); ok && traceparentRe.MatchString(tp) {
			return tp
		}
	}
	return ""
}
