package acpschema

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/acptap/acptap/internal/jsonscan"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// fval is a value the checker and the fast check read, in one of two
// forms: decoded (v, as jsonschema.UnmarshalJSON decodes: map[string]any,
// []any, string, json.Number, bool, nil), or, when t is set, the entry e
// of a parsed tape (internal/jsonscan.Tape), not decoded. A frame that
// jsonscan.Tape parses is checked in the second form: no map is built for
// it unless the fast check is unsure, and then only for the value
// jsonschema itself validates. Every method answers, for a tape entry,
// what it answers for the value decoded from it (TestTapeSameAsDecoded,
// FuzzCheck).
type fval struct {
	v any
	t *jsonscan.Tape
	e jsonscan.Ent
}

func (x fval) raw() []byte { return x.t.B[x.e.V0:x.e.V1] }

// typ is the value's JSON type bit (typeBit); 0 for a Go value that is not JSON.
func (x fval) typ() uint8 {
	if x.t == nil {
		return typeBit(x.v)
	}
	switch x.t.B[x.e.V0] {
	case '{':
		return tObject
	case '[':
		return tArray
	case '"':
		return tString
	case 't', 'f':
		return tBool
	case 'n':
		return tNull
	}
	return tNumber
}

// number is a number's text (typ is tNumber).
func (x fval) number() json.Number {
	if x.t == nil {
		return x.v.(json.Number)
	}
	return json.Number(x.raw())
}

// text is a string's text (typ is tString).
func (x fval) text() string {
	if x.t == nil {
		return x.v.(string)
	}
	d := jsonDecoder{b: x.t.B, i: int(x.e.V0)}
	s, _ := d.string() // interned when the schemas spell it
	return s.(string)
}

// scalar is the value decoded, for a format's validator; false for an
// object or an array of a tape (validators take them decoded).
func (x fval) scalar() (any, bool) {
	if x.t == nil {
		return x.v, true
	}
	if x.e.C >= 0 {
		return nil, false
	}
	d := jsonDecoder{b: x.t.B, i: int(x.e.V0)}
	return d.value(0)
}

// decoded is the value as jsonschema.UnmarshalJSON decodes it.
func (x fval) decoded() (any, error) {
	if x.t == nil {
		return x.v, nil
	}
	b := x.raw()
	if v, ok := decodeJSON(b); ok {
		return v, nil
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}

// items is an array's length (typ is tArray).
func (x fval) items() int {
	if x.t == nil {
		return len(x.v.([]any))
	}
	return int(x.t.Conts[x.e.C].N)
}

// item is an array's item i.
func (x fval) item(i int) fval {
	if x.t == nil {
		return fval{v: x.v.([]any)[i]}
	}
	return fval{t: x.t, e: x.t.Entries(x.e)[i]}
}

// member is the member k of an object; false when x is not an object or
// has no member k.
func (x fval) member(k string) (fval, bool) {
	if x.t == nil {
		m, ok := x.v.(map[string]any)
		if !ok {
			return fval{}, false
		}
		v, ok := m[k]
		return fval{v: v}, ok
	}
	e, ok := x.t.Member(x.e, k)
	if !ok {
		return fval{}, false
	}
	return fval{t: x.t, e: e}, true
}

// str is a string member's text; false when the member is absent or not a string.
func (x fval) str(k string) (string, bool) {
	m, ok := x.member(k)
	if !ok || m.typ() != tString {
		return "", false
	}
	return m.text(), true
}

// isText reports whether x is the string s (decoded only when escaped or
// not valid UTF-8).
func (x fval) isText(s string) bool {
	if x.typ() != tString {
		return false
	}
	if x.t == nil {
		return x.v.(string) == s
	}
	b := x.raw()
	body := b[1 : len(b)-1]
	if bytes.IndexByte(body, '\\') < 0 && (x.t.ValidUTF8() || utf8.Valid(body)) {
		return string(body) == s // body is the text
	}
	return x.text() == s
}

// isPlain is isText for s plain (plainText, valid UTF-8: its JSON body is
// its bytes), the bytes compared first: equal bytes are then the text, and
// unequal ones without an escape (valid UTF-8) are not. The checker's
// look-ups of the last method and update kind and of "2.0" match on most
// frames, and a match needs no scan for an escape.
func (x fval) isPlain(s string) bool {
	if x.t == nil {
		return x.isText(s)
	}
	if x.typ() != tString {
		return false
	}
	b := x.raw()
	body := b[1 : len(b)-1]
	if string(body) == s {
		return true
	}
	if x.t.ValidUTF8() && bytes.IndexByte(body, '\\') < 0 {
		return false
	}
	return x.text() == s
}

// plainKey reports whether isPlain may be given s.
func plainKey(s string) bool { return plainText(s) && utf8.ValidString(s) }

// isKey is isPlain(s) when plain (plainKey(s)), else isText(s).
func (x fval) isKey(s string, plain bool) bool {
	if plain {
		return x.isPlain(s)
	}
	return x.isText(s)
}

// isNull reports whether x is null (or, decoded, absent: nil).
func (x fval) isNull() bool { return x.typ() == tNull }

// equal is equal(v, c) for the value x holds.
func (x fval) equal(c any) tri {
	if x.t == nil {
		return equal(x.v, c)
	}
	tv, tc := x.typ(), typeBit(c)
	if tc == 0 {
		return unsure
	}
	if tv != tc {
		return no
	}
	switch tv {
	case tNull:
		return yes
	case tBool:
		if (x.t.B[x.e.V0] == 't') == c.(bool) {
			return yes
		}
		return no
	case tString:
		if x.isText(c.(string)) {
			return yes
		}
		return no
	case tNumber:
		return equal(x.number(), c)
	}
	return unsure
}

// tapeObject is object for a tape's object: the same keywords, over its
// members (Tape.Parse refuses duplicate and escaped names, so each name is
// the decoded map's key).
func (f *fastCheck) tapeObject(n *fnode, t *jsonscan.Tape, e jsonscan.Ent) tri {
	ms := t.Entries(e)
	if len(ms) < n.minProps || (n.maxProps >= 0 && len(ms) > n.maxProps) {
		return no
	}
	for _, k := range n.reqOther {
		if _, ok := t.Member(e, k); !ok {
			return no
		}
	}
	// One look-up per member: its property (idx, -1: none), counting the
	// required ones found (names are unique: Parse refuses duplicates), so
	// that a missing required member is told before any member is applied.
	var buf [16]int16
	idx := buf[:0]
	if len(ms) > len(buf) {
		idx = make([]int16, 0, len(ms))
	}
	found := 0
	for _, m := range ms {
		i := n.propIndex(t.Key(m))
		if i >= 0 && n.propList[i].req {
			found++
		}
		idx = append(idx, int16(i))
	}
	if found < n.reqProps {
		return no
	}
	r := yes
	for j, m := range ms {
		if i := idx[j]; i >= 0 {
			r = and(r, f.at(n.propList[i].node, fval{t: t, e: m}))
		} else {
			switch n.addl {
			case no:
				return no
			case unsure:
				r = and(r, f.at(n.addlN, fval{t: t, e: m}))
			}
		}
		if r == no {
			return no
		}
	}
	return r
}

// propIndex is the index in propList of the property k, or -1 (by
// comparisons for a few properties, else by binary search).
func (n *fnode) propIndex(k []byte) int {
	l := n.propList
	if len(l) <= 8 {
		for i := range l {
			if l[i].name == string(k) {
				return i
			}
		}
		return -1
	}
	return sortedIndex(l, func(p *prop) string { return p.name }, k)
}

// sortedIndex is the index of the element named k in l, sorted by name, or -1: the binary
// search of the interpreter's and the compiled validator's member tables alike.
func sortedIndex[T any](l []T, name func(*T) string, k []byte) int {
	lo, hi := 0, len(l)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if name(&l[h]) < string(k) {
			lo = h + 1
		} else {
			hi = h
		}
	}
	if lo < len(l) && name(&l[lo]) == string(k) {
		return lo
	}
	return -1
}

// envelope is what the checker reads of a message's top level: the
// JSON-RPC members (the zero fval when absent, as member gives) and
// whether it has any other (lightEnvelope).
type envelope struct {
	jsonrpc, id, method, params, result fval
	present                             uint8 // envJSONRPC, …: the members present
	other                               bool  // a member not named here
}

const (
	envJSONRPC uint8 = 1 << iota
	envID
	envMethod
	envParams
	envResult
	envError
)

func (e *envelope) has(m uint8) bool { return e.present&m != 0 }

// envelope reads the members of the object x into env: in one pass over a
// tape's members (names are unique there), by look-ups in a decoded map.
func (x fval) envelope(env *envelope) {
	if x.t == nil {
		m, _ := x.v.(map[string]any)
		for k, v := range m {
			switch k {
			case "jsonrpc":
				env.jsonrpc, env.present = fval{v: v}, env.present|envJSONRPC
			case "id":
				env.id, env.present = fval{v: v}, env.present|envID
			case "method":
				env.method, env.present = fval{v: v}, env.present|envMethod
			case "params":
				env.params, env.present = fval{v: v}, env.present|envParams
			case "result":
				env.result, env.present = fval{v: v}, env.present|envResult
			case "error":
				env.present |= envError
				env.other = true
			default:
				env.other = true
			}
		}
		return
	}
	for _, m := range x.t.Entries(x.e) {
		v := fval{t: x.t, e: m}
		switch string(x.t.Key(m)) {
		case "jsonrpc":
			env.jsonrpc, env.present = v, env.present|envJSONRPC
		case "id":
			env.id, env.present = v, env.present|envID
		case "method":
			env.method, env.present = v, env.present|envMethod
		case "params":
			env.params, env.present = v, env.present|envParams
		case "result":
			env.result, env.present = v, env.present|envResult
		case "error":
			env.present |= envError
			env.other = true
		default:
			env.other = true
		}
	}
}

// idKey is idKey of the id x holds (absent: null).
func (x fval) idKey() string {
	if x.t == nil {
		return idKey(x.v)
	}
	b := x.raw()
	switch x.typ() {
	case tNumber:
		return string(b)
	case tString:
		if verbatim(b) {
			return string(b)
		}
		return idKey(x.text())
	}
	v, _ := x.decoded()
	return idKey(v)
}

// verbatim reports whether json.Marshal writes the text of the JSON string
// b (with its quotes) as b: printable ASCII, no escape, no HTML character.
func verbatim(b []byte) bool {
	for _, c := range b[1 : len(b)-1] {
		if c < 0x20 || c >= 0x7f || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
