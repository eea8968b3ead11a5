package jsonscan

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
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

// unquoteCases are string bodies with every kind of escape, broken ones,
// surrogates alone and in pairs, and invalid UTF-8.
var unquoteCases = []string{
	``, `plain`, `a\"b`, `\\`, `\/`, `\b\f\n\r\t`, `\u0041\u00e9\u65e5`, `\uD83C\uDF89`, `\ud83c\udf89x`,
	`\ud83c`, `\udf89`, `\ud83cx`, `\ud83c\u0041`, `\ud83c\ud83c\udf89`, `\u12`, `\u12g4`, `\x`, `\'`, `\`,
	"a\x01b", `a"b`, "\xff", "a\xc3", "\xed\xa0\x80", "é\\n", "\x7f", "日本\\u8a9e", `\uFFFD`, `\uDFFF\uDBFF`,
}

// Unquote decodes as encoding/json does, and fails where it fails.
func TestUnquoteMatchesEncodingJSON(t *testing.T) {
	for _, c := range unquoteCases {
		checkUnquote(t, []byte(c))
	}
}

func checkUnquote(t *testing.T, body []byte) {
	q := append(append([]byte{'"'}, body...), '"')
	if end, ok := StringEnd(q, 0); !ok || end != len(q) {
		return // not the inside of one JSON string: not Unquote's input
	}
	var want string
	werr := json.Unmarshal(q, &want)
	got, ok := Unquote(body)
	if ok != (werr == nil) || got != want {
		t.Fatalf("Unquote(%q) = %q, %v; encoding/json: %q, %v", body, got, ok, want, werr)
	}
}

func FuzzUnquote(f *testing.F) {
	for _, c := range unquoteCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkUnquote(t, body) })
}

// StringEnd skips eight bytes at a time: it ends where the byte-by-byte
// scan ends, on strings with quotes, escapes and control bytes anywhere.
func TestStringEndMatchesByteScan(t *testing.T) {
	ref := func(b []byte, i int) (int, bool) {
		for j := i + 1; j < len(b); j++ {
			switch c := b[j]; {
			case c == '\\':
				j++
			case c == '"':
				return j + 1, true
			case c < 0x20:
				return 0, false
			}
		}
		return 0, false
	}
	alphabet := []byte("ab\"\\\x01\x1f\x20\x7f\x80\xff\xe2\x82\xac 0123456789")
	rng := rand.New(rand.NewPCG(3, 4))
	for range 50000 {
		b := []byte{'"'}
		for range rng.IntN(40) {
			if rng.IntN(3) == 0 {
				b = append(b, alphabet[rng.IntN(len(alphabet))])
			} else {
				b = append(b, 'x')
			}
		}
		e1, ok1 := StringEnd(b, 0)
		e2, ok2 := ref(b, 0)
		if e1 != e2 || ok1 != ok2 {
			t.Fatalf("StringEnd(%q) = %d, %v; byte scan %d, %v", b, e1, ok1, e2, ok2)
		}
	}
}

// skipPlain stops exactly at the first quote, backslash or control byte
// of a block of eight that holds one (every byte value, at every position,
// after any bytes), and never skips one.
func TestSkipPlainExact(t *testing.T) {
	first := func(b []byte, j int) int {
		for ; j < len(b); j++ {
			if c := b[j]; c == '"' || c == '\\' || c < 0x20 {
				return j
			}
		}
		return len(b)
	}
	check := func(b []byte) {
		for j := range len(b) + 1 {
			got, want := skipPlain(b, j), first(b, j)
			if got > want || (got < want && got+8 <= len(b)) {
				t.Fatalf("skipPlain(%q, %d) = %d; first special at %d", b, j, got, want)
			}
		}
	}
	for c := range 256 {
		for pos := range 16 {
			for _, fill := range []byte{'x', 0x80, 0xff, 0x21, 0x5c + 1, 0x1f + 1} {
				b := bytes.Repeat([]byte{fill}, 20)
				b[pos] = byte(c)
				check(b)
			}
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		check(b)
	}
}

// checkString fails unless String (and AppendString) decodes raw as
// encoding/json decodes a JSON string alone (what bytes.TrimSpace takes
// around it aside: a frame's values have no space), and fails where it
// fails.
func checkString(t *testing.T, raw []byte) {
	var want string
	trimmed := bytes.TrimSpace(raw)
	wok := len(trimmed) > 0 && trimmed[0] == '"' && json.Unmarshal(trimmed, &want) == nil
	got, ok := String(raw)
	if ok != wok || got != want {
		t.Fatalf("String(%q) = %q, %v; encoding/json %q, %v", raw, got, ok, want, wok)
	}
	app, aok := AppendString([]byte("pre"), raw)
	if aok != wok || (aok && string(app) != "pre"+want) {
		t.Fatalf("AppendString(%q) = %q, %v; encoding/json %q, %v", raw, app, aok, want, wok)
	}
	if PlainASCII(trimmed) && len(trimmed) >= 2 {
		body := trimmed[1 : len(trimmed)-1]
		if s, ok := String(append(append([]byte{'"'}, body...), '"')); PlainASCII(body) && (!ok || s != string(body)) {
			t.Fatalf("PlainASCII(%q) but String = %q, %v", body, s, ok)
		}
	}
}

func TestStringMatchesEncodingJSON(t *testing.T) {
	for _, body := range unquoteCases {
		for _, raw := range []string{`"` + body + `"`, ` "` + body + `" `, `"` + body, `"` + body + `\"`, `"` + body + `"x"`, `"abcdefgh` + body + `ijklmnop"`} {
			checkString(t, []byte(raw))
		}
	}
}

func FuzzString(f *testing.F) {
	for _, body := range unquoteCases {
		f.Add([]byte(`"` + body + `"`))
	}
	f.Fuzz(checkString)
}
