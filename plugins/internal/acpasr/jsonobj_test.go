package acpasr

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzParseObj: on valid JSON in valid UTF-8 (frames are made valid UTF-8
// before they are parsed), the one-pass splitters give what encoding/json
// gives (members and items, duplicates keeping the last value); on
// anything else they never panic.
func FuzzParseObj(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"a":"x\"y","b":[1,{"c":"]"}],"a":null}`, `{"\u0061":true, "b" : { } }`,
		`[1,"2",[3],{"4":5}]`, `{"a":"\\"}`, `{"k":-1.5e3}`, `{"a":[]}`, ` {"a" :"b"} `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		o, ok := parseObj(data)
		a, aok := splitArray(data)
		if !json.Valid(data) || !utf8.Valid(data) {
			return // not called on such input; only no panic is asked
		}
		var want map[string]json.RawMessage
		werr := json.Unmarshal(data, &want)
		isObj := bytes.HasPrefix(bytes.TrimSpace(data), []byte("{"))
		if ok != (werr == nil && isObj && want != nil) {
			t.Fatalf("parseObj(%s) ok = %v, encoding/json err = %v", data, ok, werr)
		}
		if ok {
			if len(o) != len(want) {
				t.Fatalf("parseObj(%s) = %d members, want %d", data, len(o), len(want))
			}
			for k, v := range want {
				if !bytes.Equal(compact(o.raw(k)), compact(v)) {
					t.Fatalf("parseObj(%s)[%q] = %s, want %s", data, k, o.raw(k), v)
				}
			}
		}
		var wantA []json.RawMessage
		aerr := json.Unmarshal(data, &wantA)
		isArr := bytes.HasPrefix(bytes.TrimSpace(data), []byte("["))
		if aok != (aerr == nil && isArr) {
			t.Fatalf("splitArray(%s) ok = %v, encoding/json err = %v", data, aok, aerr)
		}
		if aok {
			if len(a) != len(wantA) {
				t.Fatalf("splitArray(%s) = %d items, want %d", data, len(a), len(wantA))
			}
			for i := range a {
				if !bytes.Equal(compact(a[i]), compact(wantA[i])) {
					t.Fatalf("splitArray(%s)[%d] = %s, want %s", data, i, a[i], wantA[i])
				}
			}
		}
	})
}
