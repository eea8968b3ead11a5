package convert

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// membersMatchDecoder checks members against encoding/json on a valid
// object: the same keys (last one wins) with the same values.
func membersMatchDecoder(t *testing.T, obj []byte) {
	var want map[string]json.RawMessage
	if json.Unmarshal(obj, &want) != nil || want == nil {
		return
	}
	got := map[string]json.RawMessage{}
	members(obj, func(k, v []byte) bool {
		if bytes.IndexByte(k, '\\') >= 0 {
			return true // escaped keys are not decoded; such keys are skipped
		}
		got[string(k)] = v
		return true
	})
	for k, w := range want {
		if strings.ContainsAny(k, "\\") || !bytes.Contains(obj, []byte(`"`+k+`"`)) {
			continue
		}
		if !bytes.Equal(got[k], w) {
			t.Fatalf("%s: member %q = %s, want %s", obj, k, got[k], w)
		}
	}
}

func TestMembers(t *testing.T) {
	for _, s := range []string{
		`{}`, ` { "a" : 1 , "b":[1,{"c":"}"}],"d":"x\"y\\","e":null,"f":true,"g":-1.5e3}`,
		`{"method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]}}}`,
		`{"a":{"b":{"c":[[],[{}]]}},"a":2}`, `{"k":"\u00e9\n"}`,
	} {
		membersMatchDecoder(t, []byte(s))
	}
	if v, ok := jsonString([]byte(`"a\"b\u00e9"`)); !ok || v != `a"bé` {
		t.Errorf("jsonString = %q, %v", v, ok)
	}
	if string(member([]byte(`{"x":1,"sessionUpdate":"plan"}`), "sessionUpdate")) != `"plan"` {
		t.Error("member")
	}
}

func FuzzMembers(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":{"c":"d"},"e":[1,"]"]}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`))
	f.Add([]byte(`{"`))
	f.Add([]byte(`{"a":"\`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			members(b, func(k, v []byte) bool { jsonString(v); return true }) // must not panic
			return
		}
		membersMatchDecoder(t, b)
	})
}
