package acpasr

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/acptap/acptap/internal/jsonscan"
	"github.com/acptap/acptap/sdk/asr"
)

// obj is one JSON object with its members kept raw: keys match exactly
// (unlike struct decoding) and presence, null and value stay distinct, which
// ACP's patch rule needs.
//
// It is a list, not a map: ACP objects are small, so a lookup is a few
// comparisons of interned names, and building one is one allocation.
type obj []kv

// kv is one member of an obj. A member of an object built from the
// frame's tape (tape.go) has its container there: c, -1 for a scalar, valid
// while the tape's gen is the member's.
type kv struct {
	k   string
	v   json.RawMessage
	t   *frameTape
	c   int32
	gen uint32
}

// find returns the member k (the last one of a duplicate key).
func (o obj) find(k string) (kv, bool) {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].k == k {
			return o[i], true
		}
	}
	return kv{}, false
}

// get returns the member k's value.
func (o obj) get(k string) (json.RawMessage, bool) {
	m, ok := o.find(k)
	return m.v, ok
}

// has reports whether o has a member k.
func (o obj) has(k string) bool {
	_, ok := o.get(k)
	return ok
}

// raw returns the member k's value, nil when absent (as a map would).
func (o obj) raw(k string) json.RawMessage {
	v, _ := o.get(k)
	return v
}

// state is what a member of an obj holds.
type state uint8

const (
	missing state = iota // key absent
	isNull               // present, null
	valid                // present, of the wanted type
	invalid              // present, of another type
)

// parseObj decodes raw as a JSON object. It splits the object into its
// members in one pass (internal/jsonscan): the members' values are copied, not
// decoded (they are decoded when read), and a duplicate key keeps its last
// value, as encoding/json does. The object's own syntax is checked; a
// nested object or array is only matched by its brackets, so raw must come
// from JSON known to be valid (parseRPC checks each frame once, and every
// obj is a part of a frame).
//
// The members' values alias raw (capacity cut, so an append never writes
// into raw): raw must not change while the obj is in use. Every obj is
// parsed from a member of another, down from the copy of the frame parseRPC
// makes, so a frame is copied once, not once per nesting level.
func parseObj(raw []byte) (obj, bool) {
	o := make(obj, 0, 8)
	badKey := false
	ok := jsonscan.Members(raw, func(k, v []byte) bool {
		key, ok := internKey(k)
		if !ok {
			badKey = true
			return false
		}
		o = append(o, kv{k: key, v: json.RawMessage(v[:len(v):len(v)])})
		return true
	})
	if !ok || badKey {
		return nil, false
	}
	return o.dedupe(), true
}

// dedupe keeps one member per name, with the last value, in the place of
// the first (a map's contents: lookups, len and range as on a map).
func (o obj) dedupe() obj {
	if len(o) <= 16 {
		for i := 1; i < len(o); i++ {
			for j := 0; j < i; j++ {
				if o[j].k == o[i].k {
					return o.dedupeSlow()
				}
			}
		}
		return o
	}
	seen := make(map[string]struct{}, len(o))
	for _, m := range o {
		if _, dup := seen[m.k]; dup {
			return o.dedupeSlow()
		}
		seen[m.k] = struct{}{}
	}
	return o
}

func (o obj) dedupeSlow() obj {
	at := make(map[string]int, len(o))
	out := o[:0:0]
	for _, m := range o {
		if i, ok := at[m.k]; ok {
			out[i].v = m.v
			continue
		}
		at[m.k] = len(out)
		out = append(out, m)
	}
	return out
}

// asMap returns o as a map.
func (o obj) asMap() map[string]json.RawMessage {
	m := make(map[string]json.RawMessage, len(o))
	for _, e := range o {
		m[e.k] = e.v
	}
	return m
}

func (o obj) member(k string) (json.RawMessage, state) {
	v, ok := o.get(k)
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
	m, found := o.find(k)
	switch {
	case !found:
		return "", missing
	case isJSONNull(m.v):
		return "", isNull
	}
	var s string
	var ok bool
	if m.t != nil {
		s, ok = m.t.strs.text(m.v) // a frame's member: its conn's strings
	} else {
		s, ok = asString(m.v)
	}
	if !ok {
		return "", invalid
	}
	return s, valid
}

// strState is str's state, without decoding the string: o is part of
// valid JSON, where a value that starts with a quote is a string.
func (o obj) strState(k string) state {
	v, ok := o.get(k)
	if !ok {
		return missing
	}
	return strStateOf(v)
}

// strStateOf is strState of a present member's value v.
func strStateOf(v json.RawMessage) state {
	if isJSONNull(v) {
		return isNull
	}
	if len(v) > 0 && v[0] == '"' {
		return valid // a frame's members start with their value
	}
	if t := bytes.TrimLeft(v, " \t\r\n"); len(t) == 0 || t[0] != '"' {
		return invalid
	}
	return valid
}

// strIs reports whether the member k is the string s.
func (o obj) strIs(k, s string) bool {
	v, st := o.str(k)
	return st == valid && v == s
}

// asString decodes a JSON string value (internal/jsonscan.String).
func asString(v json.RawMessage) (string, bool) { return jsonscan.String(v) }

// object reads an object member.
func (o obj) object(k string) (obj, state) {
	e, found := o.find(k)
	switch {
	case !found:
		return nil, missing
	case isJSONNull(e.v):
		return nil, isNull
	}
	if e.t != nil {
		if m, ok := e.nested(); ok {
			return m, valid
		}
	}
	m, ok := parseObj(e.v)
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
// into its items (internal/jsonscan).
func splitArray(raw []byte) ([]json.RawMessage, bool) {
	a := []json.RawMessage{}
	ok := jsonscan.Elements(raw, func(v []byte) bool {
		a = append(a, json.RawMessage(v[:len(v):len(v)])) // aliases raw, as parseObj's members do
		return true
	})
	if !ok {
		return nil, false
	}
	return a, true
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

func isJSONNull(v json.RawMessage) bool {
	if len(v) > 0 && v[0] > ' ' && v[0] != 'n' {
		return false // no space before a value that is not null (a frame's members have none)
	}
	return string(bytes.TrimSpace(v)) == "null"
}

func isJSONNumber(v json.RawMessage) bool {
	var n json.Number
	return len(v) > 0 && (v[0] == '-' || (v[0] >= '0' && v[0] <= '9')) && json.Unmarshal(v, &n) == nil
}

// compact returns v without insignificant whitespace.
func compact(v json.RawMessage) json.RawMessage {
	if jsonscan.Compact(v) {
		// Already compact (what a peer writes): json.Compact would copy it as it is, at a
		// third of the speed. A copy still: v lies in a request buffer that is reused.
		return append(json.RawMessage(nil), v...)
	}
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
	o, ok := parseObj(bytes.Clone(raw))
	if !ok {
		return nil, false
	}
	return o.asMap(), true
}

// knownKey returns the constant string for a member name of ACP messages
// that most frames hold ("" for others): a switch on constants, which Go
// compiles to comparisons, so neither a string nor a hash is made per key.
func knownKey(k []byte) string {
	switch string(k) {
	case "jsonrpc":
		return "jsonrpc"
	case "id":
		return "id"
	case "method":
		return "method"
	case "params":
		return "params"
	case "result":
		return "result"
	case "error":
		return "error"
	case "code":
		return "code"
	case "message":
		return "message"
	case "data":
		return "data"
	case "sessionId":
		return "sessionId"
	case "update":
		return "update"
	case "sessionUpdate":
		return "sessionUpdate"
	case "content":
		return "content"
	case "type":
		return "type"
	case "text":
		return "text"
	case "messageId":
		return "messageId"
	case "toolCallId":
		return "toolCallId"
	case "status":
		return "status"
	case "title":
		return "title"
	case "kind":
		return "kind"
	case "rawInput":
		return "rawInput"
	case "rawOutput":
		return "rawOutput"
	case "locations":
		return "locations"
	case "path":
		return "path"
	case "line":
		return "line"
	case "state":
		return "state"
	case "stopReason":
		return "stopReason"
	case "_meta":
		return "_meta"
	case "entries":
		return "entries"
	case "priority":
		return "priority"
	case "availableCommands":
		return "availableCommands"
	case "name":
		return "name"
	case "description":
		return "description"
	case "input":
		return "input"
	case "currentModeId":
		return "currentModeId"
	case "modeId":
		return "modeId"
	case "mimeType":
		return "mimeType"
	case "uri":
		return "uri"
	case "resource":
		return "resource"
	case "annotations":
		return "annotations"
	case "blob":
		return "blob"
	case "diff":
		return "diff"
	case "oldText":
		return "oldText"
	case "newText":
		return "newText"
	case "terminalId":
		return "terminalId"
	case "output":
		return "output"
	case "exitStatus":
		return "exitStatus"
	case "exitCode":
		return "exitCode"
	case "signal":
		return "signal"
	case "protocolVersion":
		return "protocolVersion"
	case "clientCapabilities":
		return "clientCapabilities"
	case "agentCapabilities":
		return "agentCapabilities"
	case "authMethods":
		return "authMethods"
	case "cwd":
		return "cwd"
	case "mcpServers":
		return "mcpServers"
	case "prompt":
		return "prompt"
	case "options":
		return "options"
	case "optionId":
		return "optionId"
	case "outcome":
		return "outcome"
	case "toolCall":
		return "toolCall"
	case "fs":
		return "fs"
	case "readTextFile":
		return "readTextFile"
	case "writeTextFile":
		return "writeTextFile"
	case "terminal":
		return "terminal"
	case "env":
		return "env"
	case "args":
		return "args"
	case "command":
		return "command"
	case "headers":
		return "headers"
	case "url":
		return "url"
	case "value":
		return "value"
	case "usage":
		return "usage"
	case "used":
		return "used"
	case "size":
		return "size"
	case "cost":
		return "cost"
	case "amount":
		return "amount"
	case "currency":
		return "currency"
	case "reason":
		return "reason"
	case "role":
		return "role"
	}
	return ""
}

// internKey unquotes a member name (sdk/jsonscan.Unquote), without
// allocating for a known one.
func internKey(k []byte) (string, bool) {
	if s := knownKey(k); s != "" {
		return s, true
	}
	return jsonscan.Unquote(k)
}
