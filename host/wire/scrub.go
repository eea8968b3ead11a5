package wire

import (
	"bytes"
	"encoding/json"
)

// Scrubbed replaces every MCP server configuration value Scrub removes.
const Scrubbed = "[scrubbed]"

var (
	keyMcpServers = []byte("mcpServers")
	unicodeEscape = []byte(`\u`)
	scrubbedJSON  = json.RawMessage(`"` + Scrubbed + `"`)
	jsonNull      = []byte("null")
)

// Scrub removes MCP server configuration values from a client-to-agent line
// (ASR-712). In every JSON-RPC request or notification of the line (an
// object, or the objects of a batch array) whose params carry mcpServers —
// session/new, session/resume, session/fork and ACP v1's session/load, and
// any other method that sends them — each server's env and header values and
// each of its args become "[scrubbed]". Names, type, command, url and other
// server fields stay. Rebuilt objects keep their member order and every
// untouched value's bytes; insignificant whitespace between members is lost.
//
// A line that cannot hold such a request is returned unchanged after a byte
// check: only lines containing "mcpServers", or a \u escape that could spell
// it, are parsed. A line that is not valid JSON but contains "mcpServers" is
// cut after that word, since its values cannot be located. Scrub never panics
// and never modifies line.
func Scrub(line []byte) (out []byte, changed bool) {
	plain := bytes.Contains(line, keyMcpServers)
	if !plain && !bytes.Contains(line, unicodeEscape) {
		return line, false
	}
	v, ok, err := scrubMessage(line)
	if err != nil {
		if !plain {
			return line, false
		}
		i := bytes.Index(line, keyMcpServers) + len(keyMcpServers)
		cut := append(line[:i:i], " [scrubbed: not valid JSON]"...)
		return cut, true
	}
	if !ok {
		return line, false
	}
	return v, true
}

// scrubMessage scrubs a single message or a batch. ok reports a change; err
// reports a line that is not valid JSON.
func scrubMessage(raw []byte) ([]byte, bool, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		elems, err := arrayElems(raw)
		if err != nil {
			return nil, false, err
		}
		changed := false
		for i, el := range elems {
			if s, ok := scrubRequest(el); ok {
				elems[i], changed = s, true
			}
		}
		if !changed {
			return nil, false, nil
		}
		return encodeArray(elems), true, nil
	}
	ms, err := objectMembers(raw)
	if err != nil {
		if json.Valid(raw) {
			return nil, false, nil // a JSON value, just not an object
		}
		return nil, false, err
	}
	s, ok := scrubMembers(ms)
	return s, ok, nil
}

// scrubRequest scrubs params.mcpServers of one request object.
func scrubRequest(raw json.RawMessage) (json.RawMessage, bool) {
	ms, err := objectMembers(raw)
	if err != nil {
		return nil, false
	}
	return scrubMembers(ms)
}

func scrubMembers(ms []member) (json.RawMessage, bool) {
	if !hasMember(ms, "method") {
		return nil, false
	}
	changed := false
	for i := range ms {
		if ms[i].key != "params" {
			continue
		}
		params, err := objectMembers(ms[i].val)
		if err != nil {
			continue
		}
		pc := false
		for j := range params {
			if params[j].key == "mcpServers" {
				if s, ok := scrubServers(params[j].val); ok {
					params[j].val, pc = s, true
				}
			}
		}
		if pc {
			ms[i].val, changed = encodeObject(params), true
		}
	}
	if !changed {
		return nil, false
	}
	return encodeObject(ms), true
}

// scrubServers scrubs an array of servers (or an object of named servers).
func scrubServers(raw json.RawMessage) (json.RawMessage, bool) {
	if elems, err := arrayElems(raw); err == nil {
		for i := range elems {
			elems[i] = scrubServer(elems[i])
		}
		return encodeArray(elems), len(elems) > 0
	}
	ms, err := objectMembers(raw)
	if err != nil {
		return scrubValue(raw), !isNull(raw)
	}
	for i := range ms {
		ms[i].val = scrubServer(ms[i].val)
	}
	return encodeObject(ms), len(ms) > 0
}

func scrubServer(raw json.RawMessage) json.RawMessage {
	ms, err := objectMembers(raw)
	if err != nil {
		return scrubValue(raw)
	}
	for i := range ms {
		switch ms[i].key {
		case "env", "headers":
			ms[i].val = scrubPairs(ms[i].val)
		case "args":
			ms[i].val = scrubEach(ms[i].val)
		}
	}
	return encodeObject(ms)
}

// scrubPairs keeps each {name, value} pair's name and scrubs every other
// member; a map form ({"NAME": "value"}) keeps its keys.
func scrubPairs(raw json.RawMessage) json.RawMessage {
	if elems, err := arrayElems(raw); err == nil {
		for i, el := range elems {
			ms, err := objectMembers(el)
			if err != nil {
				elems[i] = scrubValue(el)
				continue
			}
			for j := range ms {
				if ms[j].key != "name" {
					ms[j].val = scrubValue(ms[j].val)
				}
			}
			elems[i] = encodeObject(ms)
		}
		return encodeArray(elems)
	}
	return scrubEach(raw)
}

// scrubEach scrubs every element of an array or every value of an object.
func scrubEach(raw json.RawMessage) json.RawMessage {
	if elems, err := arrayElems(raw); err == nil {
		for i := range elems {
			elems[i] = scrubValue(elems[i])
		}
		return encodeArray(elems)
	}
	if ms, err := objectMembers(raw); err == nil {
		for i := range ms {
			ms[i].val = scrubValue(ms[i].val)
		}
		return encodeObject(ms)
	}
	return scrubValue(raw)
}

// scrubValue replaces any value but null with "[scrubbed]".
func scrubValue(raw json.RawMessage) json.RawMessage {
	if isNull(raw) {
		return raw
	}
	return scrubbedJSON
}

func isNull(raw []byte) bool { return bytes.Equal(bytes.TrimSpace(raw), jsonNull) }
