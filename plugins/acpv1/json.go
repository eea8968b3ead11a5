package acpv1

import (
	"bytes"
	"encoding/json"
)

// obj is one JSON object with its members kept raw, so that a frame can be
// rewritten member by member and the members it does not touch stay as
// they came.
type obj map[string]json.RawMessage

// parseObj decodes raw as a JSON object.
func parseObj(raw []byte) (obj, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	var o obj
	if json.Unmarshal(raw, &o) != nil || o == nil {
		return nil, false
	}
	return o, true
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
func rawString(s string) json.RawMessage { return marshal(s) }

// compactID renders a JSON-RPC id for keys.
func compactID(v json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return string(v)
	}
	return b.String()
}
