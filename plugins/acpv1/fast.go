package acpv1

import (
	"bytes"
	"encoding/json"
	"slices"
	"unicode/utf8"

	"github.com/acptap/acptap/internal/jsonscan"
	"github.com/acptap/acptap/plugins/internal/acpasr"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// The fast path translates the frames most of an ACP v1 log is made of —
// session/update notifications whose update is a message chunk, a tool
// call or a tool call update — from one parse of the frame
// (internal/jsonscan's Tape), without splitting objects into maps, and
// writes the rewritten frame in one buffer. It gives the same frames,
// hints, diagnostics and state as the general path (translate.go), which
// stays the definition: anything the fast path does not recognise as
// regular (a member name the tape refuses — escaped or duplicate —, a key
// that is not plain ASCII, a member of an unexpected type, anything that
// would be diagnosed) is left to it, before any state has changed.
// TestFastPathMatchesGeneral and FuzzFastPath compare the two.

// fastPath is the translator's scratch for the fast path.
type fastPath struct {
	// tp is the frame's tape: own, or the one the engine parsed the frame
	// into while preparing its batch (pre, set by Map for the frame).
	tp       *jsonscan.Tape
	own      jsonscan.Tape
	pre      *jsonscan.Tape
	preValid bool     // pre's Parse answer
	ms       []member // the members of the object being written
	buf      []byte   // the inner levels of a rewritten frame
	// out is the rewritten frame the engine is given, written again for
	// the next frame's: the engine reads a translated frame's bytes only
	// while it maps it (as it does the frames of a batch, whose buffer the
	// plugin server reuses), copying what it keeps, and Map has it mapped
	// before the next frame is translated. A test binary overwrites it once
	// the frame is mapped (spent), so that bytes the engine kept show; one
	// grown by a large frame is dropped then.
	out []byte
	// diffs and items hold a tool call's translated diffs and its content
	// array while the frame is rewritten (the rewrite copies them into
	// buf): appended to, never overwritten within a frame, so a slice of
	// either stays what it was written as even when a later append moves
	// the buffer.
	diffs, items []byte
	// copied are the string values of the frame a rewritten tool call
	// update copies (its diffs' texts), in the order it holds them: its
	// hint's Copied (the engine's parse takes them from the wire frame's
	// tape). Like out, written again for the next frame's.
	copied []jsonscan.Ent
	// list is the translated frames of the frame (translated), written
	// again for the next frame's, as out: not one allocation a frame. A
	// test binary zeroes it once the frame is mapped (spent).
	list []acpasr.Translated
}

// translated is the fast path's list of the frame's translated frames, trs.
func (fp *fastPath) translated(trs ...acpasr.Translated) []acpasr.Translated {
	fp.list = append(fp.list[:0], trs...)
	return fp.list
}

// Bounds of the scratch kept from one frame to the next: a larger buffer,
// grown by one large frame, is dropped after it.
const (
	maxKeptBuf     = 1 << 20
	maxKeptMembers = 1 << 10
)

// release drops the frame the tape refers to and any scratch one large
// frame grew.
func (fp *fastPath) release() {
	fp.own.Release()
	fp.tp, fp.pre = nil, nil // the prepared tape goes back to the engine
	if cap(fp.buf) > maxKeptBuf {
		fp.buf = nil
	}
	fp.buf = fp.buf[:0] // its contents were copied into out
	if cap(fp.diffs) > maxKeptBuf {
		fp.diffs = nil
	}
	if cap(fp.items) > maxKeptBuf {
		fp.items = nil
	}
	fp.diffs, fp.items, fp.copied = fp.diffs[:0], fp.items[:0], fp.copied[:0]
	if cap(fp.ms) > maxKeptMembers {
		fp.ms = nil
	}
	clear(fp.ms[:cap(fp.ms)]) // no member keeps a frame's bytes
}

// member is one member of an object written sorted by key.
type member struct {
	k, v []byte
}

// fastFrame translates f when it is one of the frames the fast path
// knows; ok is false (and nothing has changed) otherwise.
func (t *translator) fastFrame(f *sdk.Frame) (list []acpasr.Translated, ok bool) {
	if t.slowOnly || f.Kind != sdk.KindLine {
		return nil, false
	}
	fp := &t.fast
	defer fp.release()
	if fp.pre != nil { // the engine's parse of this frame (ValidUTF8 is utf8.Valid of it)
		if fp.tp = fp.pre; !fp.preValid || !fp.tp.ValidUTF8() {
			return nil, false
		}
	} else if fp.tp = &fp.own; !utf8.Valid(f.Data) || !fp.tp.Parse(f.Data) {
		return nil, false
	}
	tp := fp.tp
	root := tp.Root()
	if root.C < 0 || tp.B[root.V0] != '{' {
		return nil, false
	}
	var id, method, params, result, errv jsonscan.Ent
	var hasID, hasMethod, hasParams, hasResult, hasErr bool
	for _, e := range tp.Entries(root) {
		switch string(tp.Key(e)) {
		case "id":
			id, hasID = e, true
		case "method":
			method, hasMethod = e, true
		case "params":
			params, hasParams = e, true
		case "result":
			result, hasResult = e, true
		case "error":
			errv, hasErr = e, true
		}
	}
	if !hasMethod {
		return t.fastReply(f, id, hasID, result, hasResult, hasErr && tp.B[errv.V0] == '{')
	}
	name, ok := fastConst(tp.Bytes(method), fastMethods)
	if !ok || !hasParams || !isObject(tp, params) {
		return nil, false
	}
	switch name {
	case "session/update":
		if hasID || f.Dir != sdk.A2C {
			return nil, false
		}
	case "session/request_permission":
		return t.fastPermission(f, root, params)
	case "session/prompt":
		return t.fastPrompt(f, id, hasID, params)
	default:
		return nil, false
	}
	sidEnt, ok := tp.Member(params, "sessionId")
	if !ok {
		return nil, false
	}
	sid, ok := t.fastSID(tp.Bytes(sidEnt))
	if !ok || sid == "" {
		return nil, false
	}
	upd, ok := tp.Member(params, "update")
	if !ok || !isObject(tp, upd) {
		return nil, false
	}
	kindEnt, ok := tp.Member(upd, "sessionUpdate")
	if !ok {
		return nil, false
	}
	kind, ok := fastConst(tp.Bytes(kindEnt), fastKinds)
	if !ok {
		return nil, false
	}
	switch kind {
	case "user_message_chunk", "agent_message_chunk", "agent_thought_chunk":
		return t.fastChunk(f, sid, kind, root, params, upd)
	case "tool_call", "tool_call_update":
		return t.fastTool(f, sid, kind, root, params, upd)
	case "plan":
		return t.fastPlan(f, sid, root, params, upd)
	case "current_mode_update":
		mode, isMode := "", false
		if e, ok := tp.Member(upd, "currentModeId"); ok && isString(tp.Bytes(e)) {
			if mode, isMode = fastStr(tp.Bytes(e)); !isMode {
				return nil, false
			}
		}
		s := t.session(sid)
		s.updates = true
		if isMode {
			s.mode = mode
		}
		return t.fast.translated(acpasr.Translated{Frame: *f}), true
	}
	// Kinds ACP v2 has with the same shape go to the engine as they are.
	t.session(sid).updates = true
	return t.fast.translated(acpasr.Translated{Frame: *f}), true
}

// fastPlan is update's plan on the tape: plan_update of the session's one
// plan, entries as they are when they are compact (marshal writes compact
// JSON).
func (t *translator) fastPlan(f *sdk.Frame, sid string, root, params, upd jsonscan.Ent) ([]acpasr.Translated, bool) {
	fp := &t.fast
	tp := fp.tp
	entries, ok := tp.Member(upd, "entries")
	if !ok || tp.B[entries.V0] != '[' || !jsonscan.Compact(tp.Bytes(entries)) || !fp.plainKeys(root, params) {
		return nil, false
	}
	plan := appendSorted(nil, []member{{[]byte("type"), rawString("items")}, {[]byte("planId"), rawString(planID)}, {[]byte("entries"), tp.Bytes(entries)}})
	nu := []member{{[]byte("sessionUpdate"), rawString("plan_update")}, {[]byte("plan"), plan}}
	if meta, ok := tp.Member(upd, "_meta"); ok {
		nu = append(nu, member{[]byte("_meta"), tp.Bytes(meta)})
	}
	u := appendSorted(nil, nu)
	s := t.session(sid)
	s.updates = true
	out := *f
	out.Data = fp.rewriteParams(root, params, member{[]byte("update"), u})
	return t.fast.translated(acpasr.Translated{Frame: out}), true
}

// fastReply is reply on the tape for a response the translator has
// nothing to do with (one to a request it did not remember: a permission,
// a session/new), which goes to the engine as it is, and for the response
// that ends a prompt's turn.
func (t *translator) fastReply(f *sdk.Frame, id jsonscan.Ent, hasID bool, result jsonscan.Ent, hasResult, isErr bool) ([]acpasr.Translated, bool) {
	if !hasID || (!isErr && !hasResult) || f.ReplyToMethod == "initialize" {
		return nil, false
	}
	tp := t.fast.tp
	raw := tp.Bytes(id)
	if !jsonscan.Compact(raw) {
		return nil, false // compactID would write it otherwise
	}
	k := pendingKey{f.ReplyTo, string(raw)}
	p, ok := t.pending[k]
	if !ok || f.ReplyTo == 0 {
		return t.fast.translated(acpasr.Translated{Frame: *f}), true
	}
	if p.method != "session/prompt" || isErr || !plain(p.session) {
		return nil, false
	}
	// promptAnswer for a result: the turn ends idle, with its stopReason.
	var stop []byte
	if isObject(tp, result) {
		if e, ok := tp.Member(result, "stopReason"); ok && isString(tp.Bytes(e)) {
			stop = tp.Bytes(e)
		}
	}
	delete(t.pending, k)
	s := t.session(p.session)
	if s.prompt == p {
		s.prompt = nil
	}
	s.turnEnds()
	state := []member{{[]byte("sessionUpdate"), rawString("state_update")}, {[]byte("state"), rawString("idle")}}
	if stop != nil {
		state = append(state, member{[]byte("stopReason"), stop})
	}
	u := appendSorted(nil, state)
	data := make([]byte, 0, len(u)+len(p.session)+80)
	data = append(data, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"`...)
	data = append(data, p.session...)
	data = append(data, `","update":`...)
	data = append(append(data, u...), "}}"...)
	return t.fast.translated(acpasr.Translated{Frame: sdk.Frame{Kind: sdk.KindLine, Seq: f.Seq, Dir: sdk.A2C, At: f.At, Data: data}}), true
}

// fastPrompt is call's session/prompt on the tape: the prompt, and v2's
// response taking it, with the prompt's derived message id.
func (t *translator) fastPrompt(f *sdk.Frame, id jsonscan.Ent, hasID bool, params jsonscan.Ent) ([]acpasr.Translated, bool) {
	tp := t.fast.tp
	if !hasID || f.Dir != sdk.C2A {
		return nil, false
	}
	rawID := tp.Bytes(id)
	if !jsonscan.Compact(rawID) {
		return nil, false
	}
	e, ok := tp.Member(params, "sessionId")
	if !ok {
		return nil, false
	}
	sid, ok := t.fastSID(tp.Bytes(e))
	if !ok || sid == "" {
		return nil, false
	}
	s := t.session(sid)
	p := &pending{session: sid, prompt: s.promptStarts()}
	s.prompt = p
	mid := bytes.Clone(rawID)
	p.method, p.seq, p.at, p.id = "session/prompt", f.Seq, f.At, mid
	t.pending[pendingKey{f.Seq, string(mid)}] = p
	msgID := rawString(p.prompt.id)
	resp := make([]byte, 0, len(mid)+len(msgID)+48)
	resp = append(resp, `{"id":`...)
	resp = append(resp, mid...)
	resp = append(resp, `,"jsonrpc":"2.0","result":{"messageId":`...)
	resp = append(append(resp, msgID...), "}}"...)
	taken := *f
	taken.Dir, taken.Data, taken.ReplyTo, taken.ReplyToMethod = sdk.A2C, resp, f.Seq, "session/prompt"
	return t.fast.translated(acpasr.Translated{Frame: *f}, t.withMessageHint(s, taken, p.prompt)), true
}

// fastPermission is call's session/request_permission on the tape: the
// tool call moves from params.toolCall to v2's subject.
func (t *translator) fastPermission(f *sdk.Frame, root, params jsonscan.Ent) ([]acpasr.Translated, bool) {
	fp := &t.fast
	tc, ok := fp.tp.Member(params, "toolCall")
	if !ok || f.Dir != sdk.A2C || !fp.plainKeys(root, params) {
		return nil, false
	}
	subject := appendSorted(nil, []member{{[]byte("type"), rawString("tool_call")}, {[]byte("toolCall"), fp.tp.Bytes(tc)}})
	out := *f
	out.Data = fp.rewriteParams(root, params, member{[]byte("toolCall"), nil}, member{[]byte("subject"), subject})
	return t.fast.translated(acpasr.Translated{Frame: out}), true
}

// fastChunk is messageChunk on the tape.
func (t *translator) fastChunk(f *sdk.Frame, sid, kind string, root, params, upd jsonscan.Ent) ([]acpasr.Translated, bool) {
	tp := t.fast.tp
	content, ok := tp.Member(upd, "content")
	if !ok || !isObject(tp, content) {
		return nil, false // malformed: the general path says so
	}
	// The tape took the frame, so the block is one JSON value.
	if kind != "agent_thought_chunk" && !plainTextBlock(tp, content) && acpasr.ValidBlockProblem(tp.Bytes(content)) != "" {
		return nil, false
	}
	native := ""
	if e, ok := tp.Member(upd, "messageId"); ok {
		if isString(tp.Bytes(e)) {
			if native, ok = fastStr(tp.Bytes(e)); !ok {
				return nil, false
			}
		}
	}
	if !t.fast.plainKeys(root, params, upd) {
		return nil, false
	}
	// From here on the frame is translated: the state changes as in
	// update and messageChunk.
	s := t.session(sid)
	s.updates = true
	msg := s.chunk(kind, native, func(id string) bool { return t.eng.HasPrompt(s.id, id) })
	// The frame passes through: plainKeys and the tape's refusals are
	// regularUpdate's conditions, so the engine is told the id instead.
	return t.fast.translated(t.withChunkHint(s, *f, native, msg)), true
}

// fastTool is toolCall on the tape.
func (t *translator) fastTool(f *sdk.Frame, sid, kind string, root, params, upd jsonscan.Ent) ([]acpasr.Translated, bool) {
	fp := &t.fast
	tp := fp.tp
	id, ok := tp.Member(upd, "toolCallId")
	if !ok || !isString(tp.Bytes(id)) {
		return nil, false
	}
	if !fastStrOK(tp.Bytes(id)) {
		return nil, false
	}
	changed := kind == "tool_call"
	var content []byte
	if c, ok := tp.Member(upd, "content"); ok && tp.B[c.V0] == '[' {
		diffs := false
		var items []byte
		for i, it := range tp.Entries(c) {
			d, isDiff, ok := fp.v1Diff(it)
			if !ok {
				return nil, false
			}
			if isDiff && !diffs {
				diffs = true
				items = append(fp.items[:0], '[')
				for j, prev := range tp.Entries(c)[:i] {
					if j > 0 {
						items = append(items, ',')
					}
					items = append(items, tp.Bytes(prev)...)
				}
			}
			if diffs {
				if i > 0 {
					items = append(items, ',')
				}
				if isDiff {
					items = append(items, d...)
				} else {
					items = append(items, tp.Bytes(it)...)
				}
			}
		}
		if diffs {
			content = append(items, ']')
			fp.items = content
			changed = true
		}
	}
	if changed && !fp.plainKeys(root, params, upd) {
		return nil, false
	}
	s := t.session(sid)
	s.updates = true
	if !changed {
		return t.fast.translated(acpasr.Translated{Frame: *f}), true
	}
	var hint acpasr.Hint
	if content != nil {
		hint = acpasr.Hint{Session: s.id, Lossy: []string{asr.LossV1DiffOperations}, Copied: fp.copied}
	}
	ovs := []member{{[]byte("sessionUpdate"), rawString("tool_call_update")}}
	if content != nil {
		ovs = append(ovs, member{[]byte("content"), content})
	}
	data := fp.rewrite(root, params, upd, ovs...)
	out := *f
	out.Data = data
	return t.fast.translated(acpasr.Translated{Frame: out, Hint: hint}), true
}

// v1Diff is the package's v1Diff on the tape: the v2 diff an item becomes
// (isDiff), or the item unchanged; ok is false when the fast path leaves
// the frame to the general one.
func (fp *fastPath) v1Diff(it jsonscan.Ent) (d []byte, isDiff, ok bool) {
	tp := fp.tp
	if !isObject(tp, it) {
		return nil, false, true
	}
	var typ, path, newText, oldText []byte
	var newEnt, oldEnt jsonscan.Ent
	for _, m := range tp.Entries(it) {
		switch string(tp.Key(m)) {
		case "type":
			typ = tp.Bytes(m)
		case "path":
			path = tp.Bytes(m)
		case "newText":
			newText, newEnt = tp.Bytes(m), m
		case "oldText":
			oldText, oldEnt = tp.Bytes(m), m
		}
	}
	if typ == nil || !isString(typ) {
		return nil, false, true
	}
	if s, ok := fastConst(typ, diffType); !ok {
		return nil, false, false
	} else if s != "diff" {
		return nil, false, true
	}
	if path == nil || !isString(path) || newText == nil || !isString(newText) {
		return nil, false, true
	}
	p, ok := fastStr(path)
	if !ok {
		return nil, false, false
	}
	op := "add"
	meta := []member{{[]byte(MetaNewText), newText}}
	texts := []jsonscan.Ent{newEnt}
	if oldText != nil && isString(oldText) {
		op = "modify"
		meta = append(meta, member{[]byte(MetaOldText), oldText})
		// The texts in the order the sorted _meta writes them.
		if MetaOldText < MetaNewText {
			texts = []jsonscan.Ent{oldEnt, newEnt}
		} else {
			texts = append(texts, oldEnt)
		}
	}
	// The item's texts come after the items before it, and nothing else
	// the rewrite copies is a known text.
	fp.copied = append(fp.copied, texts...)
	metaJS := fp.sorted(meta)
	change := fp.sorted([]member{{[]byte("operation"), rawString(op)}, {[]byte("path"), rawString(p)}, {[]byte("_meta"), metaJS}})
	n := len(fp.diffs)
	fp.diffs = append(append(append(fp.diffs, '['), change...), ']')
	changes := fp.diffs[n:len(fp.diffs):len(fp.diffs)]
	return fp.sorted([]member{{[]byte("type"), rawString("diff")}, {[]byte("changes"), changes}}), true, true
}

// sorted is appendSorted(nil, ms) written at the end of fp.diffs (the
// frame's scratch, dropped by release) instead of a new allocation.
func (fp *fastPath) sorted(ms []member) []byte {
	n := len(fp.diffs)
	fp.diffs = appendSorted(fp.diffs, ms)
	return fp.diffs[n:len(fp.diffs):len(fp.diffs)]
}

// plainKeys reports whether the member names of the objects a rewrite
// writes again need no escaping (rawString writes them as they are).
func (fp *fastPath) plainKeys(objs ...jsonscan.Ent) bool { return plainKeys(fp.tp, objs...) }

// plainKeys is fastPath.plainKeys on tp.
func plainKeys(tp *jsonscan.Tape, objs ...jsonscan.Ent) bool {
	for _, o := range objs {
		for _, m := range tp.Entries(o) {
			// A name on a tape has no escape and no control character
			// (Parse refuses them) and ends at its first quote, so only
			// DEL and the bytes beyond ASCII need a look.
			for _, c := range tp.Key(m) {
				if c >= 0x7f {
					return false
				}
			}
		}
	}
	return true
}

// rewrite writes the frame with the update's members set as ovs say, as
// withUpdate(f, m, nu.encode()) writes it: each object on the way down
// with its members sorted by name.
func (fp *fastPath) rewrite(root, params, upd jsonscan.Ent, ovs ...member) []byte {
	fp.buf = fp.objectWith(fp.buf[:0], upd, ovs...)
	n := len(fp.buf)
	return fp.rewriteParams(root, params, member{[]byte("update"), fp.buf[:n]})
}

// rewriteParams writes the frame with params' members set as ovs say (the
// general path's rewrite(f, "params", params.encode())).
func (fp *fastPath) rewriteParams(root, params jsonscan.Ent, ovs ...member) []byte {
	n := len(fp.buf)
	fp.buf = fp.objectWith(fp.buf, params, ovs...)
	p := fp.buf[n:]
	if size := int(root.V1-root.V0) + len(p) + 16; cap(fp.out) < size {
		fp.out = make([]byte, 0, size)
	}
	fp.out = fp.objectWith(fp.out[:0], root, member{[]byte("params"), p})
	return fp.out[:len(fp.out):len(fp.out)]
}

// spent ends the frame written in out (mapped): in a test binary (not
// one running benchmarks: acpasr.Poisoning) its bytes are overwritten, so
// that a translated frame's bytes the engine kept past its mapping
// (instead of copying them) turn into garbage and the goldens and
// comparisons fail.
func (fp *fastPath) spent() {
	if acpasr.Poisoning() {
		for i := range fp.out {
			fp.out[i] = '\x00'
		}
		clear(fp.list[:cap(fp.list)])
	}
	if cap(fp.out) > maxKeptBuf {
		fp.out = nil // a large frame's: not kept for the small ones after it
	}
}

// objectWith appends the object e with the members ovs set (a nil value
// removes the member), members sorted by name.
func (fp *fastPath) objectWith(dst []byte, e jsonscan.Ent, ovs ...member) []byte {
	tp := fp.tp
	ms := fp.ms[:0]
next:
	for _, m := range tp.Entries(e) {
		key := tp.Key(m)
		for _, o := range ovs {
			if bytes.Equal(key, o.k) {
				continue next
			}
		}
		ms = append(ms, member{key, tp.Bytes(m)})
	}
	for _, o := range ovs {
		if o.v != nil {
			ms = append(ms, o)
		}
	}
	fp.ms = ms
	return appendSorted(dst, ms)
}

// appendSorted appends the object of ms, sorted by name in place (obj's
// encode; the names are plain and distinct).
func appendSorted(dst []byte, ms []member) []byte {
	sortMembers(ms)
	dst = append(dst, '{')
	for i, m := range ms {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = append(dst, m.k...)
		dst = append(dst, '"', ':')
		dst = append(dst, m.v...)
	}
	return append(dst, '}')
}

// sortMembers sorts ms by name: an insertion sort, since an object here
// has a few members, most often in order already (a frame's jsonrpc, id,
// method, params), where slices.SortFunc's generic sort with a compare
// callback was ~1.4 % of the mapping's instructions. The names are
// distinct, so any sort gives the one order. A larger object goes to
// slices.SortFunc (an insertion sort is quadratic).
func sortMembers(ms []member) {
	if len(ms) > 16 {
		slices.SortFunc(ms, func(a, b member) int { return bytes.Compare(a.k, b.k) })
		return
	}
	for i := 1; i < len(ms); i++ {
		m := ms[i]
		j := i
		for j > 0 && string(ms[j-1].k) > string(m.k) {
			ms[j] = ms[j-1]
			j--
		}
		ms[j] = m
	}
}

// plainTextBlock reports, from the tape, that the object e is a text block
// acpasr.ValidBlockProblem finds no problem with — "type" is exactly
// "text", "text" a string, "annotations" and "_meta" absent, null or
// objects — so that the most common block is not parsed into the engine's
// heap obj to be checked (~3 % of the mapping goroutine). false says
// only "not known": ValidBlockProblem decides then.
func plainTextBlock(tp *jsonscan.Tape, e jsonscan.Ent) bool {
	var typ, text bool
	for _, m := range tp.Entries(e) {
		v := tp.Bytes(m)
		switch string(tp.Key(m)) {
		case "type":
			typ = string(v) == `"text"`
		case "text":
			text = isString(v)
		case "annotations", "_meta":
			if v[0] != '{' && string(v) != "null" {
				return false
			}
		}
	}
	return typ && text
}

// isObject reports whether e holds an object.
func isObject(tp *jsonscan.Tape, e jsonscan.Ent) bool {
	return e.C >= 0 && tp.B[e.V0] == '{'
}

// The strings the fast path compares a member with (fastConst).
var (
	fastMethods = []string{"session/update", "session/request_permission", "session/prompt"}
	fastKinds   = []string{"user_message_chunk", "agent_message_chunk", "agent_thought_chunk",
		"tool_call", "tool_call_update", "plan", "current_mode_update"}
	diffType = []string{"diff"}
)

// fastConst is fastStr for a value compared with constants: a string
// without escapes that is one of known is that constant (no new string a
// frame).
func fastConst(raw []byte, known []string) (string, bool) {
	if len(raw) >= 2 && raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		for _, k := range known {
			if string(raw[1:len(raw)-1]) == k {
				return k, true
			}
		}
	}
	return fastStr(raw)
}

// fastSID is fastStr for a session id: a session the translator knows
// gives its id (no new string a frame).
func (t *translator) fastSID(raw []byte) (string, bool) {
	if len(raw) >= 2 && raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		if s, ok := t.sessions[string(raw[1:len(raw)-1])]; ok {
			return s.id, true
		}
	}
	return fastStr(raw)
}

// fastStrOK is fastStr's ok, without the string.
func fastStrOK(raw []byte) bool {
	if len(raw) >= 2 && raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		return true
	}
	_, ok := fastStr(raw)
	return ok
}

// fastStr decodes a JSON string of a frame the tape took, as obj.str does
// (encoding/json): without escapes its text is its bytes (the frame is
// valid UTF-8).
func fastStr(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}
