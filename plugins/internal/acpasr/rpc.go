package acpasr

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/acptap/acptap/sdk"
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

// parseRPC decodes one frame's message from its JSON-RPC head
// (sdk.Frame.RPC); data is the frame's bytes as mapped (invalid UTF-8
// replaced), checked to be valid JSON once here.
func parseRPC(f *sdk.Frame, data []byte) (rpcMsg, error) {
	if !json.Valid(data) {
		return rpcMsg{}, errors.New("not valid JSON")
	}
	if len(data) != len(f.Data) || (len(data) > 0 && &data[0] != &f.Data[0]) {
		g := *f // the bytes mapped are not the frame's: read their head
		g.Data = data
		f = &g
	}
	// The head's members are slices of the caller's frame: the objects
	// parsed from them must not alias it (parseObj copies what it keeps; an
	// aliasing parseObj needs one copy of data here, the head read on it).
	h := f.RPC()
	if h.Kind == sdk.NotRPC {
		return rpcMsg{}, h.Err
	}
	m := rpcMsg{raw: bytes.TrimSpace(data), method: h.Method}
	if h.ID != nil {
		m.id = compact(h.ID)
		if isJSONNull(h.ID) {
			m.id = json.RawMessage("null")
		}
	}
	switch h.Kind {
	case sdk.Request, sdk.Notification:
		m.kind = rpcNotification
		if h.Kind == sdk.Request {
			m.kind = rpcRequest
		}
		if len(h.Params) > 0 && !isJSONNull(h.Params) {
			m.params, _ = parseObj(h.Params)
			m.paramsBad = m.params == nil
		}
	case sdk.ErrorResponse:
		m.kind = rpcError
		m.errObj, _ = parseObj(h.Error)
	default:
		m.kind = rpcResult
		if len(h.Result) > 0 && !isJSONNull(h.Result) {
			m.result, _ = parseObj(h.Result)
		}
	}
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
