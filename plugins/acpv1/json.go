package acpv1

import (
	"bytes"
	"encoding/json"
	"slices"
)

// obj is one JSON object with its members kept raw, so that a frame can be
// rewritten member by member and the members it does not touch stay as
// they came.
type obj map[string]json.RawMessage

// parseObj splits raw, a JSON object, into its members in one pass (the
// values are copied, not decoded; a duplicate key keeps its last value, as
// encoding/json does). The object's own syntax is checked; nested values
// are only matched by their brackets, so raw must be part of a frame
// checked with json.Valid (frame does so once).
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
		var key string
		if bytes.IndexByte(raw[i:end], '\\') < 0 {
			key = string(raw[i+1 : end-1])
		} else if json.Unmarshal(raw[i:end], &key) != nil {
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

// endOfValue returns the index after the JSON value starting at b[i].
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
				if depth--; depth == 0 {
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
