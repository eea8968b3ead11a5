package asr

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
)

// reference is Marshal as encoding/json alone does it.
func reference(v any) ([]byte, error) { return marshalJSON(v) }

// sameAsReference fails unless the encoder, when it encodes v, writes
// encoding/json's bytes, and unless Marshal gives encoding/json's answer.
// It reports whether the encoder took v.
func sameAsReference(t testing.TB, v any) bool {
	t.Helper()
	want, werr := reference(v)
	got, ok := encode(nil, v)
	if ok && (werr != nil || !bytes.Equal(got, want)) {
		t.Fatalf("%T:\nencoder       %s\nencoding/json %s (%v)", v, got, want, werr)
	}
	m, merr := Marshal(v)
	if (merr == nil) != (werr == nil) || !bytes.Equal(m, want) {
		t.Fatalf("%T: Marshal %s (%v), encoding/json %s (%v)", v, m, merr, want, werr)
	}
	for _, omit := range [][]string{nil, {"messageId"}, {"type", "native"}} {
		fp, err := FingerprintOf(v, omit...)
		if werr != nil {
			if err == nil || err.Error() != werr.Error() {
				t.Fatalf("%T: FingerprintOf error %v, encoding/json %v", v, err, werr)
			}
			continue
		}
		wfp, wferr := RecordFingerprint(want, omit...)
		if (err == nil) != (wferr == nil) || fp != wfp {
			c, _ := encodeAs(nil, v, true, dropped(omit))
			t.Fatalf("%T %v: FingerprintOf %x (%v), RecordFingerprint %x (%v)\nline  %s\ncanon %s\nwant  %s",
				v, omit, fp, err, wfp, wferr, want, c, canonical(nil, want, dropped(omit)))
		}
	}
	if rec, isRec := v.(Record); isRec {
		samePrepared(t, rec, werr)
	}
	return ok
}

// recordTypes are the record bodies and the types they are made of.
var recordTypes = []any{
	Entity{}, CopiedFrom{}, Envelope{}, Provenance{}, Native{}, NativeRef{}, CaptureState{}, Header{}, Agent{},
	Producer{}, Plugin{}, Source{}, Workspace{}, Root{}, Lineage{}, SessionLink{}, Inherits{}, PathRef{},
	Generic{}, Message{}, SessionRef{}, Recipient{}, ToolCall{}, Location{}, ToolResult{}, Exec{}, FileChange{},
	Cause{}, Change{}, Patch{}, Permission{}, InputRequest{}, Plan{}, Terminal{}, Output{}, Blob{}, State{},
	Compaction{}, Replaces{}, UsageSummary{}, ContextWindow{}, Cost{}, SessionInfo{}, ConfigChange{},
	ModelRef{}, Subagent{}, Declaration{}, Audit{},
}

// strs are strings encoding/json escapes in every way.
var strs = []string{"", "a", "héllo", "<a href=\"x\">&amp;</a>", "tab\there\nnl\\", "\x00\x1f\x7f", "\u2028\u2029",
	"bad \xff\xfe utf8", "emoji 😀", "/path/to/file.go", "r12",
	"a longer plain ASCII text, <html> & more, then \"quotes\" and \\ back\\slashes, a tab\t, é, \u2028 and \x01 late in the run",
	"0123456789abcdef0123456789abcdef\x7f0123456789abcdef\xc3"}

// raws are RawMessages: compact, not compact, invalid, empty.
var raws = []string{`{"a":1}`, `[1,"x",{"b":null}]`, `"s"`, `12.5e3`, `true`, `null`, `{ "a" : 1 }`, " [1, 2]\n",
	`{"a":}`, `{"a":1}{}`, ``, `"\u2028<&>"`, "\"\xff\"", `{"k":"v","k":"w"}`,
	// Strings canonRaw takes as they are (escaped as encodeString escapes),
	// and ones it must not: other escapes, an escaped closing quote, two
	// values, a raw control character.
	`"a\n\tb \"c\" \\ \u001f é \u2028"`, `"\u000a"`, `"\u00e9"`, `"\/"`, `"x\"`, `"a"b"`, `"a""b"`, "\"\x01\"", `""`}

// fill sets v (addressable) to pseudo-random contents from r: each field
// left zero, set, or set to an edge value.
func fill(r *rand.Rand, v reflect.Value, depth int) {
	if v.Type() == reflect.TypeFor[json.RawMessage]() {
		switch r.IntN(4) {
		case 0:
			v.SetBytes(nil)
		default:
			v.SetBytes([]byte(raws[r.IntN(len(raws))]))
		}
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(strs[r.IntN(len(strs))])
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt([]int64{0, 1, -1, 100}[r.IntN(4)])
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint([]uint64{0, 1, 7, 200}[r.IntN(4)])
	case reflect.Float32, reflect.Float64:
		v.SetFloat([]float64{0, 1.5, -2, 1e21}[r.IntN(4)])
	case reflect.Pointer:
		if depth > 3 || r.IntN(3) == 0 {
			return
		}
		p := reflect.New(v.Type().Elem())
		fill(r, p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		if depth > 3 || r.IntN(4) == 0 {
			return
		}
		n := r.IntN(3)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fill(r, s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Map:
		if depth > 3 || r.IntN(4) == 0 {
			return
		}
		m := reflect.MakeMap(v.Type())
		for range r.IntN(4) {
			k := reflect.New(v.Type().Key()).Elem()
			fill(r, k, depth+1)
			e := reflect.New(v.Type().Elem()).Elem()
			fill(r, e, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() && r.IntN(5) != 0 {
				fill(r, f, depth+1)
			}
		}
	case reflect.Interface:
		if r.IntN(2) == 0 {
			v.Set(reflect.ValueOf(strs[r.IntN(len(strs))]))
		}
	}
}

// conflict has a member name twice (encoding/json's dominance rules decide).
type conflict struct {
	X string `json:"x"`
	inner
}

type inner struct {
	Y string `json:"x"`
}

// TestEncoderSameAsEncodingJSON: every record type, zero and filled many
// ways, encodes as encoding/json encodes it; the encoder takes the common ones.
func TestEncoderSameAsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	took := 0
	for _, x := range recordTypes {
		typ := reflect.TypeOf(x)
		for i := range 300 {
			p := reflect.New(typ)
			if i > 0 {
				fill(r, p.Elem(), 0)
			}
			if sameAsReference(t, p.Interface()) {
				took++
			}
			sameAsReference(t, p.Elem().Interface())
		}
	}
	// Values of types outside the plan: encoding/json's answer.
	for _, v := range []any{nil, 1.5, []byte("x"), map[int]string{1: "a"}, struct{ A any }{A: 1}, [2]int{1, 2},
		struct {
			A int `json:"a,string"`
		}{3}, json.RawMessage(`{ }`), json.RawMessage(`nope`), struct{ A, B int }{1, 2},
		conflict{X: "1", inner: inner{Y: "2"}}} {
		sameAsReference(t, v)
	}
	if took < len(recordTypes)*100 {
		t.Errorf("the encoder took only %d of %d records", took, len(recordTypes)*300)
	}
}

// FuzzEncoder: records filled from the fuzzer's seed encode as
// encoding/json encodes them.
//
//	go test ./sdk/asr -run '^$' -fuzz FuzzEncoder -fuzztime 2m
func FuzzEncoder(f *testing.F) {
	f.Add(uint64(1), uint8(0))
	f.Fuzz(func(t *testing.T, seed uint64, which uint8) {
		r := rand.New(rand.NewPCG(seed, uint64(which)))
		p := reflect.New(reflect.TypeOf(recordTypes[int(which)%len(recordTypes)]))
		fill(r, p.Elem(), 0)
		sameAsReference(t, p.Interface())
	})
}
