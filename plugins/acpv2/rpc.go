package acpv2

import (
	"bytes"
	"encoding/json"
	"errors"
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

// asString decodes a JSON string.
func asString(v json.RawMessage) (string, bool) {
	var s string
	if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &s) != nil {
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

// array reads an array member.
func (o obj) array(k string) ([]json.RawMessage, state) {
	v, st := o.member(k)
	if st != valid {
		return nil, st
	}
	var a []json.RawMessage
	if v[0] != '[' || json.Unmarshal(v, &a) != nil {
		return nil, invalid
	}
	return a, valid
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

// rpcKind classifies a JSON-RPC message.
type rpcKind uint8

const (
	rpcRequest rpcKind = iota + 1
	rpcNotification
	rpcResult
	rpcError
)

// rpcMsg is one decoded JSON-RPC message.
type rpcMsg struct {
	kind   rpcKind
	id     json.RawMessage // compacted; nil for notifications
	method string
	params obj // nil when absent or not an object
	// paramsBad is set when params is present but not an object.
	paramsBad bool
	result    obj
	errObj    obj
	raw       json.RawMessage
}

var (
	errNotObject = errors.New("not a JSON object")
	errNotRPC    = errors.New("neither a request, a notification nor a response")
	errMethod    = errors.New(`"method" is not a string`)
)

// parseRPC decodes one frame's bytes.
func parseRPC(data []byte) (rpcMsg, error) {
	o, ok := parseObj(data)
	if !ok {
		if !json.Valid(data) {
			return rpcMsg{}, errors.New("not valid JSON")
		}
		return rpcMsg{}, errNotObject
	}
	m := rpcMsg{raw: compact(bytes.TrimSpace(data))}
	if id, st := o.member("id"); st != missing {
		m.id = compact(id)
		if st == isNull {
			m.id = json.RawMessage("null")
		}
	}
	if _, st := o.member("method"); st != missing {
		method, st := o.str("method")
		if st != valid {
			return rpcMsg{}, errMethod
		}
		m.method = method
		m.kind = rpcNotification
		if m.id != nil {
			m.kind = rpcRequest
		}
		if p, st := o.object("params"); st == valid {
			m.params = p
		} else if st == invalid {
			m.paramsBad = true
		}
		return m, nil
	}
	if m.id == nil {
		return rpcMsg{}, errNotRPC
	}
	if e, st := o.object("error"); st == valid {
		m.kind, m.errObj = rpcError, e
		return m, nil
	}
	if _, st := o.member("result"); st == missing {
		return rpcMsg{}, errNotRPC
	}
	m.kind = rpcResult
	m.result, _ = o.object("result")
	return m, nil
}

// idString renders a JSON-RPC id for derived ids ("<n>:<id>", ASR-716): a
// string id as its text, any other id as its JSON.
func idString(id json.RawMessage) string {
	if s, ok := asString(id); ok {
		return s
	}
	return string(id)
}
