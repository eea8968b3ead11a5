package sdk

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/acptap/acptap/internal/jsonscan"
)

// RPCKind says what a JSON-RPC message is.
type RPCKind uint8

const (
	// NotRPC is a frame that is not one JSON-RPC message (RPC.Err says
	// why), or not a line frame.
	NotRPC RPCKind = iota
	// Request has a method and an id.
	Request
	// Notification has a method and no id.
	Notification
	// Response has an id and a result.
	Response
	// ErrorResponse has an id and an error object.
	ErrorResponse
)

// RPC is the JSON-RPC head of a line frame: what every mapper reads first.
// The raw members are slices of Frame.Data, as written.
type RPC struct {
	Kind RPCKind
	// Method of a request or notification.
	Method string
	// ID as written (a number, a string, or null); nil for a notification.
	ID json.RawMessage
	// Params, Result and Error as written, of any JSON type; nil when absent.
	Params, Result, Error json.RawMessage
	// SessionID is the ACP session the frame names: params.sessionId of a
	// request or notification, result.sessionId of a response (session/new
	// answers with the new session's); "" when it names none as a string.
	SessionID string
	// Err says why Kind is NotRPC. With ErrNotRPC the members found are
	// kept (an id without a result, say); with the others there are none.
	Err error
}

// The reasons a line frame is not a JSON-RPC message.
var (
	ErrNotObject = errors.New("not a JSON object")
	ErrNotRPC    = errors.New("neither a request, a notification nor a response")
	ErrMethod    = errors.New(`"method" is not a string`)
)

// rpcCache is a frame's parsed head, with the data it was parsed from.
type rpcCache struct {
	data []byte
	rpc  RPC
}

// RPC returns the frame's JSON-RPC head, read on first use in one pass over
// the message's top level (internal/jsonscan) and kept with the frame, so
// no mapper parses it by hand. A frame whose Data is replaced is read again.
// Only the top level is checked: nested values are matched by their
// brackets, not validated (run json.Valid(f.Data) before trusting them).
// A gap or session frame is NotRPC with no Err.
func (f *Frame) RPC() *RPC {
	if c := f.rpc; c != nil && sameBytes(c.data, f.Data) {
		return &c.rpc
	}
	c := &rpcCache{data: f.Data}
	if f.Kind == KindLine {
		c.rpc = parseRPC(f.Data)
	}
	f.rpc = c
	return &c.rpc
}

// sameBytes says whether a and b are the same slice (not equal contents).
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

func parseRPC(data []byte) RPC {
	var r RPC
	var method []byte
	hasMethod, badKey := false, false
	ok := jsonscan.Members(data, func(k, v []byte) bool {
		key, ok := unescapedKey(k)
		if !ok {
			badKey = true
			return false
		}
		switch string(key) {
		case "id":
			r.ID = json.RawMessage(v)
		case "method":
			method, hasMethod = v, true
		case "params":
			r.Params = json.RawMessage(v)
		case "result":
			r.Result = json.RawMessage(v)
		case "error":
			r.Error = json.RawMessage(v)
		}
		return true
	})
	if !ok || badKey {
		return RPC{Err: ErrNotObject}
	}
	switch {
	case hasMethod:
		s, ok := jsonscan.String(method)
		if !ok {
			return RPC{Err: ErrMethod}
		}
		r.Method, r.Kind = s, Notification
		if r.ID != nil {
			r.Kind = Request
		}
		r.SessionID = sessionIDIn(r.Params)
	case r.ID == nil:
		r.Err = ErrNotRPC
		return r
	case len(r.Error) > 0 && r.Error[0] == '{':
		r.Kind = ErrorResponse
	case r.Result != nil:
		r.Kind = Response
		r.SessionID = sessionIDIn(r.Result)
	default:
		r.Err = ErrNotRPC
	}
	return r
}

// sessionIDIn is the sessionId string member of an object ("" when none).
func sessionIDIn(o []byte) string {
	if len(o) == 0 || o[0] != '{' {
		return ""
	}
	id := ""
	jsonscan.Members(o, func(k, v []byte) bool {
		if key, _ := unescapedKey(k); string(key) != "sessionId" {
			return true
		}
		id, _ = jsonscan.String(v)
		return false // ACP sends it first: the rest of params is not scanned
	})
	return id
}

// unescapedKey is a member name with its escapes decoded (k itself when it
// has none, the usual case: no allocation).
func unescapedKey(k []byte) ([]byte, bool) {
	if bytes.IndexByte(k, '\\') < 0 {
		return k, true
	}
	s, ok := jsonscan.Unquote(k)
	return []byte(s), ok
}
