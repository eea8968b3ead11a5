package aep

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/acptap/acptap/internal/acpschema"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/aep"
)

type jsonNumber = json.Number

// obj is a decoded JSON object.
type obj = map[string]any

// msgKind classifies a JSON-RPC message.
type msgKind uint8

const (
	kindRequest msgKind = iota + 1
	kindNotification
	kindResult
	kindError
)

// msg is one decoded JSON-RPC message.
type msg struct {
	kind   msgKind
	id     string // the id's JSON text, compacted; "" for notifications
	method string
	params obj // nil when absent or not an object
	result obj // nil when absent or not an object
	errObj obj
}

// parseMsg decodes one frame's message from its JSON-RPC head
// (sdk.Frame.RPC): only the id and the params, result or error are decoded.
func parseMsg(f *sdk.Frame) (msg, error) {
	if !utf8.Valid(f.Data) {
		return msg{}, errors.New("not valid UTF-8")
	}
	if !json.Valid(f.Data) {
		return msg{}, errors.New("not valid JSON")
	}
	return msgOf(f.RPC())
}

// msgOf decodes the message of a valid frame from its JSON-RPC head.
func msgOf(h *sdk.RPC) (msg, error) {
	var m msg
	if h.ID != nil {
		m.id = idOf(h.ID)
	}
	switch h.Kind {
	case sdk.NotRPC:
		return msg{}, h.Err
	case sdk.Request, sdk.Notification:
		m.kind, m.method = kindNotification, h.Method
		if h.Kind == sdk.Request {
			m.kind = kindRequest
		}
		m.params = decodeObj(h.Params)
	case sdk.ErrorResponse:
		m.kind, m.errObj = kindError, decodeObj(h.Error)
	default:
		m.kind, m.result = kindResult, decodeObj(h.Result)
	}
	return m, nil
}

// decodeObj decodes a member that may be an object (nil if it is not).
func decodeObj(raw []byte) obj {
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	// One pass, no encoding/json, for the common member; what the fast
	// decoder does not take gets aep.Decode's answer, as before.
	v, ok := acpschema.DecodeJSON(raw)
	if !ok {
		v, _ = aep.Decode(raw)
	}
	o, _ := v.(obj)
	return o
}

// idText is a JSON-RPC id's JSON text ("7", "\"abc\"", "null").
func idText(v any) string {
	b, err := aep.Canonical(v)
	if err != nil {
		return "?"
	}
	return string(b)
}

var unsafeRunChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// runToken renders a JSON-RPC id for a run id: a number or a plain string
// as it is; any other string reduced to [A-Za-z0-9._-] (AEP-0003 §9.6) and
// suffixed with a short hash so that two ids never collide.
func runToken(id string) string {
	var s string
	if json.Unmarshal([]byte(id), &s) != nil {
		s = id
	}
	if aep.SafeName(s) {
		return s
	}
	sum := sha256.Sum256([]byte(id))
	return strings.Trim(unsafeRunChars.ReplaceAllString(s, "_"), "_") + "." + hex.EncodeToString(sum[:4])
}

// Accessors over decoded objects.

func str(o obj, k string) (string, bool) {
	s, ok := o[k].(string)
	return s, ok
}

func child(o obj, k string) obj {
	c, _ := o[k].(obj)
	return c
}

func list(o obj, k string) []any {
	a, _ := o[k].([]any)
	return a
}

// traceparentRe is the envelope's traceparent pattern.
var traceparentRe = regexp.MustCompile(`^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$`)

// traceparent lifts a W3C traceparent from the _meta of the given objects
// (the first valid one wins).
func traceparent(objs ...obj) string {
	for _, o := range objs {
		if tp, ok := str(child(o, "_meta"), "traceparent"); ok && traceparentRe.MatchString(tp) {
			return tp
		}
	}
	return ""
}

// textOf joins the text of content blocks (one block or an array).
func textOf(v any) string {
	switch x := v.(type) {
	case obj:
		if t, _ := str(x, "type"); t == "text" {
			s, _ := str(x, "text")
			return s
		}
		if t, _ := str(x, "type"); t == "content" {
			return textOf(x["content"])
		}
	case []any:
		var parts []string
		for _, e := range x {
			if s := textOf(e); s != "" {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}
