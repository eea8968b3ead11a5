package asr

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/acptap/acptap/internal/jsonscan"
)

// The record encoder: what encoding/json (no HTML escaping) writes for the
// types records are made of, from a plan built once per type, without
// encoding/json's reflection per value and without its second pass over
// every json.RawMessage (it compacts and so validates each one; here one
// already compact is checked in one fast pass and copied). A type the plan
// does not model (floats, interfaces, arrays, a Marshaler other than
// json.RawMessage, a ",string" or conflicting field, …), or a value it
// cannot copy as is (a RawMessage that is not compact JSON), makes Marshal
// use encoding/json, so the bytes and the errors are always encoding/json's
// (TestEncoderSameAsEncodingJSON, FuzzEncoder).

// encFn appends v's JSON to dst; false: encoding/json must encode it. A
// struct leaves out its members named in drop (the canonical form's
// identity fields); other values ignore it.
type encFn func(dst []byte, v reflect.Value, drop []string) ([]byte, bool)

// A plan is for the JSON encoding:json's, or the canonical form (canon.go:
// members sorted, strings as canonical re-escapes them).
type planKey struct {
	t     reflect.Type
	canon bool
}

var (
	encoders      sync.Map // planKey → encFn (nil: not modelled)
	rawType       = reflect.TypeFor[json.RawMessage]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
)

// encode appends the JSON of v (a record or any value) to dst.
func encode(dst []byte, v any) ([]byte, bool) {
	return encodeAs(dst, v, false, nil)
}

// encodeAs appends v's JSON, or with canon its canonical form without the
// top-level members drop names (and native.ref, native when nothing else
// is left in it): canonical(Marshal(v), drop), without the line.
func encodeAs(dst []byte, v any, canon bool, drop []string) ([]byte, bool) {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return nil, false
	}
	fn := encoderFor(rv.Type(), canon)
	if fn == nil {
		return nil, false
	}
	return fn(dst, rv, drop)
}

func encoderFor(t reflect.Type, canon bool) encFn {
	key := planKey{t, canon}
	if fn, ok := encoders.Load(key); ok {
		return fn.(encFn)
	}
	// Recursive types: a placeholder that finds the finished encoder.
	var (
		wg  sync.WaitGroup
		fin encFn
	)
	wg.Add(1)
	fn, loaded := encoders.LoadOrStore(key, encFn(func(dst []byte, v reflect.Value, drop []string) ([]byte, bool) {
		wg.Wait()
		if fin == nil {
			return nil, false
		}
		return fin(dst, v, drop)
	}))
	if loaded {
		return fn.(encFn)
	}
	fin = newEncoder(t, canon)
	wg.Done()
	if fin == nil {
		encoders.Store(key, encFn(nil))
		return nil
	}
	encoders.Store(key, fin)
	return fin
}

func newEncoder(t reflect.Type, canon bool) encFn {
	if t == rawType {
		if canon {
			return canonRaw
		}
		return encodeRaw
	}
	if t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) {
		return nil
	}
	switch t.Kind() {
	case reflect.String:
		if canon {
			return func(dst []byte, v reflect.Value, _ []string) ([]byte, bool) { return canonText(dst, v.String()), true }
		}
		return func(dst []byte, v reflect.Value, _ []string) ([]byte, bool) {
			return encodeString(dst, v.String()), true
		}
	case reflect.Bool:
		return func(dst []byte, v reflect.Value, _ []string) ([]byte, bool) {
			return strconv.AppendBool(dst, v.Bool()), true
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(dst []byte, v reflect.Value, _ []string) ([]byte, bool) {
			return strconv.AppendInt(dst, v.Int(), 10), true
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return func(dst []byte, v reflect.Value, _ []string) ([]byte, bool) {
			return strconv.AppendUint(dst, v.Uint(), 10), true
		}
	case reflect.Pointer:
		elem := encoderFor(t.Elem(), canon)
		if elem == nil {
			return nil
		}
		return func(dst []byte, v reflect.Value, drop []string) ([]byte, bool) {
			if v.IsNil() {
				return append(dst, "null"...), true
			}
			return elem(dst, v.Elem(), drop)
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil // base64
		}
		elem := encoderFor(t.Elem(), canon)
		if elem == nil {
			return nil
		}
		return func(dst []byte, v reflect.Value, _ []string) ([]byte, bool) {
			if v.IsNil() {
				return append(dst, "null"...), true
			}
			dst = append(dst, '[')
			for i := range v.Len() {
				if i > 0 {
					dst = append(dst, ',')
				}
				var ok bool
				if dst, ok = elem(dst, v.Index(i), nil); !ok {
					return nil, false
				}
			}
			return append(dst, ']'), true
		}
	case reflect.Map:
		if t.Key().Kind() != reflect.String || t.Key().Implements(reflect.TypeFor[interface{ MarshalText() ([]byte, error) }]()) {
			return nil
		}
		elem := encoderFor(t.Elem(), canon)
		if elem == nil {
			return nil
		}
		return func(dst []byte, v reflect.Value, _ []string) ([]byte, bool) {
			if v.IsNil() {
				return append(dst, "null"...), true
			}
			keys := v.MapKeys()
			slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
			dst = append(dst, '{')
			for i, k := range keys {
				if canon && !utf8.ValidString(k.String()) {
					return nil, false // canonical keys are decoded ones: two may become one
				}
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = append(encodeString(dst, k.String()), ':')
				var ok bool
				if dst, ok = elem(dst, v.MapIndex(k), nil); !ok {
					return nil, false
				}
			}
			return append(dst, '}'), true
		}
	case reflect.Struct:
		return structEncoder(t, canon)
	}
	return nil
}

// canonText is what canonical makes of the string encodeString writes for
// s: the same, but each invalid byte of UTF-8 (written \ufffd) as U+FFFD
// itself.
func canonText(dst []byte, s string) []byte {
	if !utf8.ValidString(s) {
		var b strings.Builder
		for _, r := range s { // an invalid byte is utf8.RuneError
			b.WriteRune(r)
		}
		s = b.String()
	}
	return encodeString(dst, s)
}

// canonRaw is canonical's form of a json.RawMessage value (compact JSON,
// else encoding/json decides).
func canonRaw(dst []byte, v reflect.Value, _ []string) ([]byte, bool) {
	if v.IsNil() {
		return append(dst, "null"...), true
	}
	b := v.Bytes()
	if knownBlocks.has(b) {
		return canonTextBlock(dst, b), true
	}
	// A string escaped as encodeString escapes (a v1 diff's text, in a
	// change's _meta) is compact JSON and its own canonical form: one scan
	// instead of Compact's and canonString's.
	if n := len(b); n >= 2 && b[0] == '"' && b[n-1] == '"' && canonEscaped(b[1:n-1]) {
		return append(dst, b...), true
	}
	if !jsonscan.Compact(b) {
		return nil, false
	}
	return canonValue(dst, b), true
}

// encodeRaw copies a json.RawMessage that is compact JSON (what
// encoding/json writes for it); any other makes encoding/json encode the
// record (it compacts the message, or fails on it).
func encodeRaw(dst []byte, v reflect.Value, _ []string) ([]byte, bool) {
	if v.IsNil() {
		return append(dst, "null"...), true
	}
	b := v.Bytes()
	if !knownBlocks.has(b) && !jsonscan.Compact(b) {
		return nil, false
	}
	return append(dst, b...), true
}

// field is one member a struct encodes.
type field struct {
	index     []int
	name      string
	head      string // "name": (with the comma when it is not first)
	omitEmpty bool
	enc       encFn
	dual      dualFn // set in the plans Prepare uses (prepared.go)
	hasRaw    bool   // its type holds a json.RawMessage
	identity  bool   // one of identityFields (the canonical form's usual drop)
	// Set in the plans Prepare uses (empty.go; emptyByReflect elsewhere):
	off   uintptr   // the member's offset in the struct structFields was given
	empty emptyKind // how its emptiness is read at off
}

// at is the field's value in v (its struct): FieldByIndex without its
// checks for embedded pointers, which structFields refuses.
func (f *field) at(v reflect.Value) reflect.Value {
	for _, i := range f.index {
		v = v.Field(i)
	}
	return v
}

// fieldCursor reads fields of one struct value, v, in their order: the
// embedded struct a run of fields is in (a record's Envelope, its
// Provenance) is taken once, not again for each of its fields.
type fieldCursor struct {
	v   reflect.Value
	in  int           // v's field sub is (-1: none yet)
	sub reflect.Value // v.Field(in)
}

func newCursor(v reflect.Value) fieldCursor { return fieldCursor{v: v, in: -1} }

// at is f.at(c.v).
func (c *fieldCursor) at(f *field) reflect.Value {
	ix := f.index
	if len(ix) == 1 {
		return c.v.Field(ix[0])
	}
	if ix[0] != c.in {
		c.sub, c.in = c.v.Field(ix[0]), ix[0]
	}
	v := c.sub
	for _, i := range ix[1:] {
		v = v.Field(i)
	}
	return v
}

// drops reports whether drop names f: drop is usually identityFields
// itself (FingerprintOf without omit), answered by the plan.
func (f *field) drops(drop []string) bool {
	if len(drop) == len(identityFields) && &drop[0] == &identityFields[0] {
		return f.identity
	}
	return slices.Contains(drop, f.name)
}

// leftOut reports whether f's value fv may be left out of an encoding:
// false when Marshal fails on a bad json.RawMessage in it.
func (f *field) leftOut(fv reflect.Value) bool {
	if !f.hasRaw || f.omitEmpty && isEmpty(fv) {
		return true
	}
	_, ok := f.enc(nil, fv, nil)
	return ok
}

// holdsRaw reports whether a value of type t can hold a json.RawMessage.
func holdsRaw(t reflect.Type, seen map[reflect.Type]bool) bool {
	if t == rawType {
		return true
	}
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return holdsRaw(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if holdsRaw(t.Field(i).Type, seen) {
				return true
			}
		}
	}
	return false
}

// nativeRef is what the canonical form leaves out of a record's native.
var nativeRef = []string{"ref"}

func structEncoder(t reflect.Type, canon bool) encFn {
	fs, ok := structFields(t, nil, map[string]bool{}, canon)
	if !ok {
		return nil
	}
	if canon {
		slices.SortStableFunc(fs, func(a, b field) int { return strings.Compare(a.name, b.name) })
	}
	return func(dst []byte, v reflect.Value, drop []string) ([]byte, bool) {
		dst = append(dst, '{')
		first := true
		cur := newCursor(v)
		for i := range fs {
			f := &fs[i]
			fv := cur.at(f)
			if drop != nil && f.drops(drop) {
				if !f.leftOut(fv) {
					return nil, false
				}
				continue
			}
			if f.omitEmpty && isEmpty(fv) {
				continue
			}
			mark := len(dst)
			if first {
				dst = append(dst, f.head[1:]...)
			} else {
				dst = append(dst, f.head...)
			}
			var sub []string
			native := drop != nil && f.name == "native" && fv.Kind() == reflect.Pointer && !fv.IsNil()
			if native {
				sub = nativeRef // a record's native, in the canonical form
			}
			start := len(dst)
			var ok bool
			if dst, ok = f.enc(dst, fv, sub); !ok {
				return nil, false
			}
			if native && string(dst[start:]) == "{}" {
				dst = dst[:mark]
				continue
			}
			first = false
		}
		return append(dst, '}'), true
	}
}

// structFields lists t's members in encoding/json's order (declaration
// order, embedded structs in place); false for what the plan does not
// model: a name twice (encoding/json's dominance rules), an embedded
// pointer or non-struct, a tag option other than omitempty, a name
// encoding/json would escape or reject.
func structFields(t reflect.Type, index []int, seen map[string]bool, canon bool) ([]field, bool) {
	var out []field
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		idx := append(slices.Clip(index), i)
		if sf.Anonymous {
			if name != "" || sf.Type.Kind() != reflect.Struct {
				return nil, false
			}
			sub, ok := structFields(sf.Type, idx, seen, canon)
			if !ok {
				return nil, false
			}
			out = append(out, sub...)
			continue
		}
		if !sf.IsExported() {
			continue
		}
		omit := false
		for o := range strings.SplitSeq(opts, ",") {
			switch o {
			case "":
			case "omitempty":
				omit = true
			default:
				return nil, false
			}
		}
		if name == "" {
			name = sf.Name
		}
		if !plainName(name) || seen[name] {
			return nil, false
		}
		seen[name] = true
		enc := encoderFor(sf.Type, canon)
		if enc == nil {
			return nil, false
		}
		out = append(out, field{index: idx, name: name, head: `,"` + name + `":`, omitEmpty: omit, enc: enc,
			hasRaw: holdsRaw(sf.Type, map[reflect.Type]bool{}), identity: slices.Contains(identityFields, name)})
	}
	return out, true
}

// plainName reports whether encoding/json takes name as a tag's name and
// writes it unescaped.
func plainName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.ContainsRune("_./-:@$", c):
		default:
			return false
		}
	}
	return true
}

// isEmpty is omitempty's test.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String, reflect.Slice, reflect.Map:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return v.Uint() == 0
	case reflect.Pointer:
		return v.IsNil()
	}
	return false
}
