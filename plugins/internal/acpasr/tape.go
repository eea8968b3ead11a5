package acpasr

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"slices"

	"github.com/acptap/acptap/internal/jsonscan"
	"github.com/acptap/acptap/sdk"
)

// frameTape is the structure of the frame being mapped, parsed once
// (internal/jsonscan.Tape) for both the schema check and the mapping: the
// check reads it instead of parsing the frame (acpschema.CheckParsed), and
// the objects of the frame's head, params and nested members are built from
// it (objAt) instead of being scanned again. A conn has one; gen tells the
// objects of the current frame from those kept from earlier ones, which
// fall back to scanning their bytes.
type frameTape struct {
	t jsonscan.Tape
	// alt is the tape a translated frame is parsed into when it copies
	// strings of the wire frame t holds (parseFrom); then the two swap.
	alt  jsonscan.Tape
	ok   bool       // t holds the frame f, parsed
	f    *sdk.Frame // the frame parsed
	gen  uint32
	data []byte // the bytes the objects alias (parseRPCTape: lend's)
	// pdata is those bytes lent ahead (PrepareFrames), for parseRPCTape.
	pdata []byte
	// slab holds the members of the current frame's objects (objAt): not
	// one allocation per object, and none a frame once it has room, as it
	// is reused from frame to frame (newSlab). So an object built from the
	// tape lives until the next frame's: what a body keeps across frames
	// (a tool call's content item) is a copy (keep).
	slab []kv
	// strs are the short strings read from the frames' members (ids,
	// kinds), so that the same id read frame after frame is one string.
	strs strCache
	// lent are, in a test binary, the copies the objects of the frames
	// mapped since the last release alias (lend).
	lent [][]byte
	// poison is poisoning(), read once for the conn (newConn): a call a
	// frame costs more than the field.
	poison bool
}

// lend is the bytes the objects built from data alias: data itself, as
// the engine keeps nothing of a frame's bytes once the call that maps it
// has returned (what it keeps is decoded or copied: own). In a test
// binary it is a copy, poisoned when the call returns (release), so that
// a value kept without a copy reads garbage.
func (ft *frameTape) lend(data []byte) []byte {
	if !ft.poison {
		return data
	}
	c := bytes.Clone(data)
	ft.lent = append(ft.lent, c)
	return c
}

// poisonLent overwrites the copies lend made.
func (ft *frameTape) poisonLent() {
	for _, b := range ft.lent {
		for i := range b {
			b[i] = 0xff
		}
	}
	clear(ft.lent)
	ft.lent = ft.lent[:0]
}

// strCache remembers recent short strings of plain ASCII by a hash of
// their bytes (one per slot, the last read), so that reading one again
// does not allocate.
type strCache struct {
	slots [256]string
}

// maxCached is the longest string text strCache keeps.
const maxCached = 64

// text is asString(v): for a JSON string of printable ASCII with no
// escape (jsonscan.PlainASCII: its text is its bytes) the cached string,
// else decoded.
func (c *strCache) text(v []byte) (string, bool) {
	if len(v) < 2 || len(v) > maxCached+2 || v[0] != '"' || v[len(v)-1] != '"' {
		return asString(v)
	}
	body := v[1 : len(v)-1]
	// The slot: the length and the first and last (up to) eight bytes.
	var a, b uint64
	if len(body) >= 8 {
		a, b = binary.LittleEndian.Uint64(body), binary.LittleEndian.Uint64(body[len(body)-8:])
	} else {
		for i := range body {
			a |= uint64(body[i]) << (8 * i)
		}
		b = a
	}
	h := (a*0x9e3779b97f4a7c15 ^ b*0xc2b2ae3d27d4eb4f ^ uint64(len(body))) >> 56
	slot := &c.slots[h%uint64(len(c.slots))]
	if *slot == string(body) {
		return *slot, true // a slot holds plain ASCII only (or "", which is): so does body
	}
	if !jsonscan.PlainASCII(body) {
		return asString(v)
	}
	*slot = string(body)
	return *slot, true
}

// maxSlab is the most members a frame's slab keeps room for between
// frames (~56 KiB).
const maxSlab = 1024

// newSlab starts a frame's objects: the slab's room is reused, the
// objects built from the frame before are dead. In a test binary the
// members they had are poisoned first, so an object kept from an earlier
// frame without a copy reads garbage or the next frame's members.
func (ft *frameTape) newSlab() {
	if ft.poison {
		poison(ft.slab)
	}
	if cap(ft.slab) > maxSlab {
		ft.slab = nil
		return
	}
	ft.slab = ft.slab[:0]
}

// poison overwrites members no object may read any more.
func poison(slab []kv) {
	for i := range slab {
		slab[i] = kv{k: poisonKey, v: json.RawMessage(poisonValue), c: -1}
	}
}

const (
	poisonKey   = "\x00poisoned"
	poisonValue = `"\u0000poisoned"`
)

// keep is a copy of o (built from a frame's tape) that outlives the
// frame: its members and their values, in one allocation for the bytes.
func keep(o obj) obj {
	k, _ := keepWith(o, nil)
	return k
}

// keepWith is keep(o) and a copy of extra in the same allocation (nil for
// nil).
func keepWith(o obj, extra json.RawMessage) (obj, json.RawMessage) {
	if o == nil {
		return nil, own(extra)
	}
	n := len(extra)
	for _, m := range o {
		n += len(m.v)
	}
	buf := make([]byte, 0, n)
	out := slices.Clone(o)
	for i := range out {
		m := &out[i]
		l := len(buf)
		buf = append(buf, m.v...)
		m.v = buf[l:len(buf):len(buf)]
		m.t = nil // not the tape's any more: nested objects are scanned
	}
	if extra != nil {
		l := len(buf)
		buf = append(buf, extra...)
		extra = buf[l:len(buf):len(buf)]
	}
	return out, extra
}

// parse parses f's data into the tape; it reports whether the tape took it.
func (ft *frameTape) parse(f *sdk.Frame) bool {
	ft.gen++
	ft.newSlab()
	ft.f, ft.data, ft.pdata = f, nil, nil
	ft.ok = ft.t.Parse(f.Data)
	return ft.ok
}

// parseFrom is parse of f, a translation of wire that copies wire's
// string values copied (Hint.Copied): when the tape holds wire, they are
// taken from it instead of scanned again (jsonscan.Tape.ParseWith), and
// the tape is parse's.
func (ft *frameTape) parseFrom(f, wire *sdk.Frame, copied []jsonscan.Ent) bool {
	if len(copied) == 0 || wire == nil || !ft.holds(wire, wire.Data) {
		return ft.parse(f)
	}
	ft.gen++
	ft.newSlab()
	ft.f, ft.data, ft.pdata = f, nil, nil
	ft.ok, _ = ft.alt.ParseWith(f.Data, &ft.t, copied)
	ft.t, ft.alt = ft.alt, ft.t
	ft.alt.Release() // wire's: the frame's objects are dead, as after parse
	return ft.ok
}

// forget drops the frame the tape holds: a translator's frames (and
// their bytes) may lie at the same address frame after frame, and a later
// one is not the frame parsed.
func (ft *frameTape) forget() { ft.f, ft.ok = nil, false }

// holds reports whether the tape is f's, unchanged.
func (ft *frameTape) holds(f *sdk.Frame, data []byte) bool {
	return ft.ok && ft.f == f && len(data) == len(f.Data) && (len(data) == 0 || &data[0] == &f.Data[0])
}

// adopt makes the tape f's without parsing f when the tape holds wire, the
// frame being checked (checkedAs), and f is another frame on wire's very
// bytes — the same memory and length, as a translator's frame passed
// through unchanged has: what parsing them again would give. An equal copy
// elsewhere is not adopted (it is parsed), nor a frame once the tape has
// moved on from wire (to an earlier translated frame), nor one outside a
// check (wire nil). The objects of the frame before are dead, as after
// parse; the bytes they alias (lent: the wire frame's, or their copy in a
// test binary) are the same bytes and unchanged until the call returns, so
// f's objects share them.
func (ft *frameTape) adopt(f, wire *sdk.Frame) bool {
	if wire == nil || f == wire || !ft.holds(wire, wire.Data) || len(f.Data) == 0 ||
		!sameBytes(f.Data, wire.Data) || !sameBytes(f.Data, ft.t.B) {
		return false
	}
	ft.gen++
	ft.newSlab()
	if ft.data != nil {
		ft.pdata = ft.data // parseRPCTape takes them as the bytes lent ahead
	}
	ft.f, ft.data = f, nil
	return true
}

// release drops the references to the caller's frame.
func (ft *frameTape) release() {
	ft.t.Release()
	ft.alt.Release()
	ft.f, ft.data, ft.ok, ft.pdata = nil, nil, false, nil
	clear(ft.slab[:cap(ft.slab)]) // the frames it points into
	ft.newSlab()
	ft.poisonLent()
}

// objAt builds the object that is the tape's entry e, its values aliasing
// ft.data; e must be an object of the current frame.
func (ft *frameTape) objAt(e jsonscan.Ent) obj {
	ents := ft.t.Entries(e)
	n := len(ents)
	if n == 0 {
		return obj{} // not nil: an empty object is not an absent one
	}
	if cap(ft.slab)-len(ft.slab) < n {
		// Room for the members of every object below the top level (the
		// top level's are read from the tape, not built), at least 64,
		// at most maxSlab (the objects built so far keep the old room).
		below := len(ft.t.Ents)
		if r := ft.t.Root(); r.C >= 0 {
			below -= len(ft.t.Entries(r))
		}
		ft.slab = make([]kv, 0, max(n, min(max(below, 64), maxSlab)))
	}
	l := len(ft.slab)
	o := obj(ft.slab[l : l+n : l+n]) // appending to o copies it
	ft.slab = ft.slab[:l+n]
	for i, m := range ents {
		k := ft.data[m.K0:m.K1]
		key := knownKey(k)
		if key == "" {
			key = string(k) // the tape refuses names with escapes
		}
		o[i] = kv{k: key, v: json.RawMessage(ft.data[m.V0:m.V1:m.V1]), t: ft, c: m.C, gen: ft.gen}
	}
	return o
}

// nested returns the object m holds when it is one of the current frame's.
func (m kv) nested() (obj, bool) {
	if m.t == nil || m.gen != m.t.gen || m.c < 0 || m.t.data == nil || len(m.v) == 0 || m.v[0] != '{' {
		return nil, false
	}
	return m.t.objAt(jsonscan.Ent{C: m.c}), true
}

// elems returns the items of the array m holds when it is one of the
// current frame's, built from the tape as objAt builds an object's members
// (without names), so that an item that is an object is built from the
// tape too (nested) instead of the array and the item being scanned.
func (m kv) elems() ([]kv, bool) {
	if m.t == nil || m.gen != m.t.gen || m.c < 0 || m.t.data == nil || len(m.v) == 0 || m.v[0] != '[' {
		return nil, false
	}
	return m.t.objAt(jsonscan.Ent{C: m.c}), true
}

// items reads an array member as array does, each item a member without a
// name: from the tape when the array is the current frame's (elems; the
// items live until the next frame's objects, as nested ones do), else
// split.
func (o obj) items(k string) ([]kv, state) {
	e, found := o.find(k)
	switch {
	case !found:
		return nil, missing
	case isJSONNull(e.v):
		return nil, isNull
	}
	if a, ok := e.elems(); ok {
		return a, valid
	}
	a, ok := splitArray(e.v)
	if !ok {
		return nil, invalid
	}
	out := make([]kv, len(a))
	for i, v := range a {
		out[i] = kv{v: v}
	}
	return out, valid
}

// asObj reads an item (items) as an object: built from the tape when it is
// the current frame's, else parsed.
func (m kv) asObj() (obj, bool) {
	if o, ok := m.nested(); ok {
		return o, true
	}
	return parseObj(m.v)
}

// parseRPCTape is parseRPCChecked for a frame the tape holds: the head is
// read from the tape's top level (as sdk.Frame.RPC reads it) and params,
// result and error are built from the tape.
func parseRPCTape(ft *frameTape, data []byte) (rpcMsg, error) {
	if ft.pdata != nil && len(ft.pdata) == len(data) {
		ft.data, ft.pdata = ft.pdata, nil // what PrepareFrames lent of data
	} else {
		ft.data = ft.lend(data)
	}
	t := &ft.t
	root := t.Root()
	if root.C < 0 || data[root.V0] != '{' {
		return rpcMsg{}, sdk.ErrNotObject
	}
	var id, method, params, result, errv *jsonscan.Ent
	ents := t.Entries(root)
	for i := range ents {
		switch string(t.Key(ents[i])) {
		case "id":
			id = &ents[i]
		case "method":
			method = &ents[i]
		case "params":
			params = &ents[i]
		case "result":
			result = &ents[i]
		case "error":
			errv = &ents[i]
		}
	}
	raw := func(e *jsonscan.Ent) json.RawMessage { return ft.data[e.V0:e.V1:e.V1] }
	m := rpcMsg{raw: ft.data[root.V0:root.V1]} // bytes.TrimSpace(ft.data): only JSON space is around the value
	if id != nil {
		m.id = compact(raw(id))
		if isJSONNull(m.id) {
			m.id = json.RawMessage("null")
		}
	}
	objOf := func(e *jsonscan.Ent) obj {
		if data[e.V0] != '{' {
			return nil
		}
		return ft.objAt(*e)
	}
	switch {
	case method != nil:
		s, ok := ft.strs.text(raw(method))
		if !ok {
			return rpcMsg{}, sdk.ErrMethod
		}
		m.method, m.kind = s, rpcNotification
		if id != nil {
			m.kind = rpcRequest
		}
		if params != nil && !isJSONNull(raw(params)) {
			m.params = objOf(params)
			m.paramsBad = m.params == nil
		}
	case id == nil:
		return rpcMsg{}, sdk.ErrNotRPC
	case errv != nil && data[errv.V0] == '{':
		m.kind = rpcError
		m.errObj = objOf(errv)
	case result != nil:
		m.kind = rpcResult
		if !isJSONNull(raw(result)) {
			m.result = objOf(result)
		}
	default:
		return rpcMsg{}, sdk.ErrNotRPC
	}
	return m, nil
}
