package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// member is one member of a JSON object: the decoded key and the value's
// bytes exactly as they appeared.
type member struct {
	key string
	val json.RawMessage
}

var errNotObject = errors.New("not a JSON object")

// objectMembers splits a JSON object into its members, in order, keeping
// duplicates. It fails on anything but exactly one object.
func objectMembers(raw []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errNotObject
	}
	var ms []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, ok := t.(string)
		if !ok {
			return nil, errNotObject
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		ms = append(ms, member{key: k, val: v})
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, errNotObject
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errNotObject
	}
	return ms, nil
}

// arrayElems splits a JSON array into its elements' bytes.
func arrayElems(raw []byte) ([]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return nil, errors.New("not a JSON array")
	}
	var out []json.RawMessage
	for dec.More() {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if t, err := dec.Token(); err != nil || t != json.Delim(']') {
		return nil, errors.New("not a JSON array")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after JSON array")
	}
	return out, nil
}

func encodeObject(ms []member) json.RawMessage {
	out := []byte{'{'}
	for i, m := range ms {
		if i > 0 {
			out = append(out, ',')
		}
		out = appendString(out, []byte(m.key))
		out = append(out, ':')
		out = append(out, m.val...)
	}
	return append(out, '}')
}

func encodeArray(elems []json.RawMessage) json.RawMessage {
	out := []byte{'['}
	for i, el := range elems {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, el...)
	}
	return append(out, ']')
}
