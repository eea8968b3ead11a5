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

// CopiesFrames says a Session keeps nothing of its frames' bytes once Map
// has returned: the objects built from a frame alias its bytes while it is
// mapped (frameTape.lend), and what a body keeps past the frame is decoded
// or copied (compact, own, keep: own.go). The plugin server relies on it to
// map a batch in the received message's buffer
// (internal/pluginwire.FrameCopier).
func (s *Session) CopiesFrames() {}

// parseRPC decodes one frame's message from its JSON-RPC head
// (sdk.Frame.RPC); data is the frame's bytes as mapped (invalid UTF-8
// replaced), checked to be valid JSON once here.
func parseRPC(f *sdk.Frame, data []byte) (rpcMsg, error) { return parseRPCChecked(f, data, false) }

// parseRPCChecked is parseRPC; isJSON says the frame is known to be JSON
// (the schema check decoded it and it conforms), so it is not validated a
// second time.
func parseRPCChecked(f *sdk.Frame, data []byte, isJSON bool) (rpcMsg, error) {
	if !isJSON && !json.Valid(data) {
		return rpcMsg{}, errors.New("not valid JSON")
	}
	// The one copy of the frame: the objects parseObj makes alias it (not
	// the caller's frame), and the head is read on it.
	g := *f
	g.Data = bytes.Clone(data)
	f, data = &g, g.Data
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
