package aep

import (
	"encoding/json"

	"github.com/acptap/acptap/sdk/aep"
)

// encodeEvent is json.Marshal(ev) without its second pass: json.Marshal
// calls ev.MarshalJSON, then checks and compacts what it wrote, escaping
// <, >, & and U+2028/U+2029 for HTML. MarshalJSON writes compact, valid
// JSON (sdk/aep's canonical writer), so only that escaping can change it;
// an output that holds one of those bytes, and any error, go through
// json.Marshal itself (the same bytes, the same error text).
// TestEncodeEventMatchesMarshal compares the two.
func encodeEvent(ev *aep.Event) ([]byte, error) {
	b, err := ev.MarshalJSON()
	if err != nil || htmlSensitive(b) {
		return json.Marshal(ev)
	}
	return b, nil
}

// htmlSensitive reports whether b may hold what json.Marshal escapes for
// HTML: <, >, & or the first byte of U+2028 and U+2029 (0xE2, which other
// characters share: those take the slow way too).
func htmlSensitive(b []byte) bool {
	for _, c := range b {
		if c == '<' || c == '>' || c == '&' || c == 0xE2 {
			return true
		}
	}
	return false
}
