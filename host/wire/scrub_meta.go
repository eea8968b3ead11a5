package wire

import (
	"encoding/json"
	"strings"

	"github.com/acptap/acptap/sdk/aep"
)

// scrubMeta scrubs a _meta value of a client-to-agent line, where clients
// keep copies of their MCP configuration under keys of their own: members
// named env or headers keep their names and lose their values, args lose
// every element, members named for a credential (aep.IsSecretKey) lose
// their value, a nested mcpServers is scrubbed as such, and every other
// string gets the redaction floor's secret patterns (aep.RedactSecrets).
// Past maxScrubDepth the whole value is scrubbed.
func scrubMeta(raw json.RawMessage, depth int) (json.RawMessage, bool) {
	if depth >= maxScrubDepth {
		return scrubValue(raw), !isNull(raw)
	}
	if elems, err := arrayElems(raw); err == nil {
		changed := false
		for i := range elems {
			if s, ok := scrubMeta(elems[i], depth+1); ok {
				elems[i], changed = s, true
			}
		}
		if !changed {
			return raw, false
		}
		return encodeArray(elems), true
	}
	if ms, err := objectMembers(raw); err == nil {
		changed := false
		for i := range ms {
			k := ms[i].key
			var s json.RawMessage
			switch {
			case strings.EqualFold(k, "mcpServers"):
				s, _ = scrubServers(ms[i].val)
			case strings.EqualFold(k, "env"), strings.EqualFold(k, "headers"):
				s = scrubPairs(ms[i].val)
			case strings.EqualFold(k, "args"):
				s = scrubEach(ms[i].val)
			case aep.IsSecretKey(k):
				s = scrubValue(ms[i].val)
			default:
				s, _ = scrubMeta(ms[i].val, depth+1)
			}
			if s != nil && string(s) != string(ms[i].val) {
				ms[i].val, changed = s, true
			}
		}
		if !changed {
			return raw, false
		}
		return encodeObject(ms), true
	}
	s := redactString(raw)
	return s, string(s) != string(raw)
}

// redactString applies aep.RedactSecrets to a JSON string value; any other
// value is returned as it is.
func redactString(raw json.RawMessage) json.RawMessage {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return raw
	}
	r := aep.RedactSecrets(s)
	if r == s {
		return raw
	}
	return appendString(nil, []byte(strings.ToValidUTF8(r, "\uFFFD")))
}
