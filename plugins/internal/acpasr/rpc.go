package acpasr

import (
	"bytes"
	"encoding/json"
	"errors"
)

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
	raw       json.RawMessage // the message as received (compact it to record it)
}

var (
	errNotObject = errors.New("not a JSON object")
	errNotRPC    = errors.New("neither a request, a notification nor a response")
	errMethod    = errors.New(`"method" is not a string`)
)

// parseRPC decodes one frame's bytes.
func parseRPC(data []byte) (rpcMsg, error) {
	if !json.Valid(data) {
		return rpcMsg{}, errors.New("not valid JSON")
	}
	o, ok := parseObj(data)
	if !ok {
		return rpcMsg{}, errNotObject
	}
	m := rpcMsg{raw: bytes.TrimSpace(data)}
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
