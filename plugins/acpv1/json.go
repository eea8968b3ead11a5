package acpv1

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/acptap/acptap/plugins/internal/acpasr"
)

// obj is one JSON object with its members kept raw, so that a frame can be
// rewritten member by member and the members it does not touch stay as
// they came.
type obj map[string]json.RawMessage

// parseObj splits raw, a JSON object, into its members in one pass (the
// engine's splitter: values copied raw, a duplicate key keeps its last
// value). raw must be part of a frame checked with json.Valid (frame does
// so once).
func parseObj(raw []byte) (obj, bool) {
	o, ok := acpasr.SplitObject(raw)
	return obj(o), ok
}

// encode writes o as a JSON object, members sorted by key, values as they
// are (they are parts of checked JSON, or marshal's).
func (o obj) encode() json.RawMessage {
	keys := make([]string, 0, len(o))
	n := 2
	for k, v := range o {
		keys = append(keys, k)
		n += len(k) + len(v) + 4
	}
	slices.Sort(keys)
	b := make([]byte, 0, n)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, rawString(k)...)
		b = append(b, ':')
		b = append(b, o[k]...)
	}
	return append(b, '}')
}

// str reads a string member.
func (o obj) str(k string) (string, bool) {
	v, ok := o[k]
	if !ok || len(v) == 0 || v[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// object reads an object member.
func (o obj) object(k string) (obj, bool) {
	v, ok := o[k]
	if !ok {
		return nil, false
	}
	return parseObj(v)
}

// array reads an array member.
func (o obj) array(k string) ([]json.RawMessage, bool) {
	v, ok := o[k]
	if !ok {
		return nil, false
	}
	v = bytes.TrimSpace(v)
	var a []json.RawMessage
	if len(v) == 0 || v[0] != '[' || json.Unmarshal(v, &a) != nil {
		return nil, false
	}
	return a, true
}

// has reports whether k is present and not null.
func (o obj) has(k string) bool {
	v, ok := o[k]
	return ok && string(bytes.TrimSpace(v)) != "null"
}

// marshal renders v as JSON (members of maps sorted; HTML not escaped).
func marshal(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("acpv1: marshal: " + err.Error()) // only our own values are marshalled
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// rawString renders s as a JSON string.
func rawString(s string) json.RawMessage {
	if plain(s) {
		return json.RawMessage(`"` + s + `"`)
	}
	return marshal(s)
}

// plain reports whether s needs no escaping in JSON.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			return false
		}
	}
	return true
}

// compactID renders a JSON-RPC id for keys.
func compactID(v json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return string(v)
	}
	return b.String()
}

// array writes items as a JSON array.
func array(items []json.RawMessage) json.RawMessage {
	b := []byte{'['}
	for i, x := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, x...)
	}
	return append(b, ']')
}

// isString reports whether v is a JSON string (of a checked frame).
func isString(v json.RawMessage) bool { return len(v) >= 2 && v[0] == '"' }
