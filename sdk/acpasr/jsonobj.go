package acpasr

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/acptap/acptap/sdk/asr"
)

// obj is one JSON object with its members kept raw: keys match exactly
// (unlike struct decoding) and presence, null and value stay distinct, which
// ACP's patch rule needs.
type obj map[string]json.RawMessage

// state is what a member of an obj holds.
type state uint8

const (
	missing state = iota // key absent
	isNull               // present, null
	valid                // present, of the wanted type
	invalid              // present, of another type
)

// parseObj decodes raw as a JSON object. It splits the object into its
// members in one pass: the members' values are copied, not decoded (they
// are decoded when read), and a duplicate key keeps its last value, as
// encoding/json does. The object's own syntax is checked; a nested object
// or array is only matched by its brackets, so raw must come from JSON
// known to be valid (parseRPC checks each frame once, and every obj is a
// part of a frame).
func parseObj(raw []byte) (obj, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '{' {
		return nil, false
	}
	o := obj{}
	i := skipSpace(raw, 1)
	if i < len(raw) && raw[i] == '}' {
		return o, skipSpace(raw, i+1) == len(raw)
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return nil, false
		}
		end, ok := endOfString(raw, i)
		if !ok {
			return nil, false
		}
		key, ok := unquoteKey(raw[i:end])
		if !ok {
			return nil, false
		}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return nil, false
		}
		i = skipSpace(raw, i+1)
		vend, ok := endOfValue(raw, i)
		if !ok {
			return nil, false
		}
		o[key] = json.RawMessage(bytes.Clone(raw[i:vend]))
		i = skipSpace(raw, vend)
		if i >= len(raw) {
			return nil, false
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case '}':
			return o, skipSpace(raw, i+1) == len(raw)
		default:
			return nil, false
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// endOfString returns the index after the string starting at b[i] ('"').
func endOfString(b []byte, i int) (int, bool) {
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '\\':
			j++
		case c == '"':
			return j + 1, true
		case c < 0x20:
			return 0, false
		}
	}
	return 0, false
}

// endOfValue returns the index after the JSON value starting at b[i]. A
// nested object or array is matched by its brackets (strings skipped);
// scalars end at a delimiter and are checked with json.Valid.
func endOfValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		return endOfString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, ok := endOfString(b, j)
				if !ok {
					return 0, false
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, true
				}
			}
		}
		return 0, false
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	if j == i || !json.Valid(b[i:j]) {
		return 0, false
	}
	return j, true
}

// unquoteKey decodes a member name; names without escapes (all of ACP's)
// are taken as they are.
func unquoteKey(q []byte) (string, bool) {
	if bytes.IndexByte(q, '\\') < 0 {
		return string(q[1 : len(q)-1]), true
	}
	var s string
	if json.Unmarshal(q, &s) != nil {
		return "", false
	}
	return s, true
}

func (o obj) member(k string) (json.RawMessage, state) {
	v, ok := o[k]
	switch {
	case !ok:
		return nil, missing
	case isJSONNull(v):
		return nil, isNull
	}
	return v, valid
}

// str reads a string member.
func (o obj) str(k string) (string, state) {
	v, st := o.member(k)
	if st != valid {
		return "", st
	}
	s, ok := asString(v)
	if !ok {
		return "", invalid
	}
	return s, valid
}

// asString decodes a JSON string. A string without escapes (of a checked
// frame) is taken as it is.
func asString(v json.RawMessage) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	if end, ok := endOfString(v, 0); ok && end == len(v) && bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1]), true
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// object reads an object member.
func (o obj) object(k string) (obj, state) {
	v, st := o.member(k)
	if st != valid {
		return nil, st
	}
	m, ok := parseObj(v)
	if !ok {
		return nil, invalid
	}
	return m, valid
}

// array reads an array member, split into its items (copied, not
// decoded) in one pass, as parseObj splits an object.
func (o obj) array(k string) ([]json.RawMessage, state) {
	v, st := o.member(k)
	if st != valid {
		return nil, st
	}
	a, ok := splitArray(v)
	if !ok {
		return nil, invalid
	}
	return a, valid
}

// splitArray splits raw, a JSON array that is part of a checked frame,
// into its items.
func splitArray(raw []byte) ([]json.RawMessage, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '[' {
		return nil, false
	}
	a := []json.RawMessage{}
	i := skipSpace(raw, 1)
	if i < len(raw) && raw[i] == ']' {
		return a, skipSpace(raw, i+1) == len(raw)
	}
	for {
		end, ok := endOfValue(raw, i)
		if !ok {
			return nil, false
		}
		a = append(a, json.RawMessage(bytes.Clone(raw[i:end])))
		i = skipSpace(raw, end)
		if i >= len(raw) {
			return nil, false
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case ']':
			return a, skipSpace(raw, i+1) == len(raw)
		default:
			return nil, false
		}
	}
}

// number reads a numeric member, kept as its JSON text.
func (o obj) number(k string) (json.RawMessage, state) {
	v, st := o.member(k)
	if st != valid {
		return nil, st
	}
	if !isJSONNumber(v) {
		return nil, invalid
	}
	return v, valid
}

func isJSONNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

func isJSONNumber(v json.RawMessage) bool {
	var n json.Number
	return len(v) > 0 && (v[0] == '-' || (v[0] >= '0' && v[0] <= '9')) && json.Unmarshal(v, &n) == nil
}

// compact returns v without insignificant whitespace.
func compact(v json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return v
	}
	return b.Bytes()
}

// id reads a non-empty string member (a session id); "" is invalid.
func (o obj) id(k string) (string, state) {
	s, st := o.str(k)
	if st == valid && s == "" {
		return "", invalid
	}
	return s, st
}

// isInt reports whether a JSON number is an integer (1, -3, 2.0, 1e3),
// as the ASR schema's "integer" means; an exponent beyond ±1000 is
// rejected rather than expanded.
func isInt(v json.RawMessage) bool {
	s := strings.TrimPrefix(string(bytes.TrimSpace(v)), "-")
	if !isJSONNumber(v) {
		return false
	}
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil || e > 1000 || e < -1000 {
			return false
		}
		mant, exp = s[:i], e
	}
	whole, frac, _ := strings.Cut(mant, ".")
	frac = strings.TrimRight(frac, "0")
	if exp >= 0 {
		return len(frac) <= exp
	}
	if frac != "" {
		return false
	}
	whole = strings.TrimLeft(whole, "0")
	return len(whole)-len(strings.TrimRight(whole, "0")) >= -exp || whole == ""
}

// isUint reports whether a JSON number is a non-negative integer.
func isUint(v json.RawMessage) bool {
	if !isInt(v) {
		return false
	}
	s := string(bytes.TrimSpace(v))
	mant, _, _ := strings.Cut(strings.ToLower(s), "e")
	return s[0] != '-' || strings.Trim(mant, "-0.") == ""
}

// vendorValue reports whether s is a vendor value: "_" and at least one
// more character (the ASR schema's vendorValue).
func vendorValue(s string) bool { return len(s) > 1 && s[0] == '_' }

// absolutePath reports whether p is an absolute path, POSIX or Windows
// (what a PathRef with root null may hold, ASR-711).
func absolutePath(p string) bool {
	_, ok := asr.RefOK(nil, p)
	return ok
}

// SplitObject splits raw, a JSON object that is part of a frame already
// checked with json.Valid, into its members in one pass (see parseObj):
// the values are copied raw, a duplicate key keeps its last value. It is
// exported for translators that feed the engine (plugins/acpv1).
func SplitObject(raw []byte) (map[string]json.RawMessage, bool) {
	return parseObj(raw)
}
