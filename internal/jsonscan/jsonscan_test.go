package jsonscan

import (
	"bytes"
	"encoding/json"
	"testing"
)

// members collects what Members hands out, keys decoded, last value of a
// duplicate key kept (as encoding/json does).
func members(t testing.TB, obj []byte) (map[string]string, bool) {
	got := map[string]string{}
	ok := Members(obj, func(k, v []byte) bool {
		key, ok := Unquote(k)
		if !ok {
			t.Fatalf("Unquote(%q) failed inside a well-formed object", k)
		}
		got[key] = string(v)
		return true
	})
	return got, ok
}

// reference decodes obj as encoding/json does.
func reference(obj []byte) (map[string]string, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil || m == nil {
		return nil, false
	}
	out := map[string]string{}
	for k, v := range m {
		out[k] = string(v)
	}
	return out, true
}

var cases = []string{
	`{}`, ` { } `, `{"a":1}`, `{"a" : [1, {"b":"]}"}] , "c":null,"d":true,"e":-1.5e3}`,
	`{"k\u00e9y":"v","k\"q":{"x":[[]]},"dup":1,"dup":2}`,
	`{"s":"a\\\"b","t":"\u2028 ✓ \ud83d\ude00"}`,
	`{"a":1,}`, `{"a":1 "b":2}`, `{"a"1}`, `{a:1}`, `{"a":01}`, `{"a":tru}`, `{"a":"x}`, `{"a":[1,2}`,
	`{"a":1}x`, `[1]`, `"s"`, ``, `{"a":"raw` + "\x01" + `ctl"}`,
}

func TestMembersMatchesEncodingJSON(t *testing.T) {
	for _, c := range cases {
		check(t, []byte(c))
	}
}

func check(t *testing.T, obj []byte) {
	t.Helper()
	if !json.Valid(obj) {
		// Nested values are only bracket-matched: a malformed nested value
		// may pass; it must not panic.
		Members(obj, func(k, v []byte) bool { Unquote(k); return true })
		return
	}
	got, ok := members(t, obj)
	want, wantOK := reference(obj)
	if ok != wantOK {
		t.Fatalf("Members(%q) ok = %v, encoding/json %v", obj, ok, wantOK)
	}
	if !ok {
		return
	}
	if len(got) != len(want) {
		t.Fatalf("Members(%q) = %v, want %v", obj, got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("Members(%q)[%q] = %q, want %q", obj, k, got[k], v)
		}
	}
}

func TestElements(t *testing.T) {
	for _, c := range []string{`[]`, ` [ 1 , "a" , {"b":[2]} , [ ] , null ] `, `[1,]`, `[1 2]`, `{}`, `[1]]`} {
		var got []string
		ok := Elements([]byte(c), func(v []byte) bool { got = append(got, string(v)); return true })
		var want []json.RawMessage
		wantOK := json.Unmarshal([]byte(c), &want) == nil && bytes.HasPrefix(bytes.TrimSpace([]byte(c)), []byte("["))
		if ok != wantOK || (ok && len(got) != len(want)) {
			t.Errorf("Elements(%q) = %q, %v; encoding/json %q, %v", c, got, ok, want, wantOK)
			continue
		}
		for i := range want {
			if ok && got[i] != string(want[i]) {
				t.Errorf("Elements(%q)[%d] = %q, want %q", c, i, got[i], want[i])
			}
		}
	}
}

func TestMembersStops(t *testing.T) {
	n := 0
	ok := Members([]byte(`{"a":1,"b":2,"c":3}`), func(k, v []byte) bool { n++; return string(k) != "b" })
	if !ok || n != 2 {
		t.Errorf("stopped after %d members, ok %v", n, ok)
	}
}

func TestString(t *testing.T) {
	for raw, want := range map[string]string{`"a"`: "a", ` "\u00e9\n" `: "é\n", "\"\xff\"": "\ufffd"} {
		if got, ok := String([]byte(raw)); !ok || got != want {
			t.Errorf("String(%q) = %q, %v; want %q", raw, got, ok, want)
		}
	}
	for _, raw := range []string{`a`, `"a`, `"a"b"`, `1`, "\"\x01\""} {
		if _, ok := String([]byte(raw)); ok {
			t.Errorf("String(%q) accepted", raw)
		}
	}
}

func FuzzMembers(f *testing.F) {
	for _, c := range cases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, obj []byte) {
		check(t, obj)
	})
}
