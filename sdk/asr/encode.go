package asr

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

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

// encFn appends v's JSON to dst; false: encoding/json must encode it.
type encFn func(dst []byte, v reflect.Value) ([]byte, bool)

var (
	encoders      sync.Map // reflect.Type → encFn (nil: not modelled)
	rawType       = reflect.TypeFor[json.RawMessage]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
)

// encode appends the JSON of v (a record or any value) to dst.
func encode(dst []byte, v any) ([]byte, bool) {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return nil, false
	}
	fn := encoderFor(rv.Type())
	if fn == nil {
		return nil, false
	}
	return fn(dst, rv)
}

func encoderFor(t reflect.Type) encFn {
	if fn, ok := encoders.Load(t); ok {
		return fn.(encFn)
	}
	// Recursive types: a placeholder that finds the finished encoder.
	var (
		wg  sync.WaitGroup
		fin encFn
	)
	wg.Add(1)
	fn, loaded := encoders.LoadOrStore(t, encFn(func(dst []byte, v reflect.Value) ([]byte, bool) {
		wg.Wait()
		if fin == nil {
			return nil, false
		}
		return fin(dst, v)
	}))
	if loaded {
		return fn.(encFn)
	}
	fin = newEncoder(t)
	wg.Done()
	if fin == nil {
		encoders.Store(t, encFn(nil))
		return nil
	}
	encoders.Store(t, fin)
	return fin
}

func newEncoder(t reflect.Type) encFn {
	if t == rawType {
		return encodeRaw
	}
	if t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) {
		return nil
	}
	switch t.Kind() {
	case reflect.String:
		return func(dst []byte, v reflect.Value) ([]byte, bool) { return encodeString(dst, v.String()), true }
	case reflect.Bool:
		return func(dst []byte, v reflect.Value) ([]byte, bool) { return strconv.AppendBool(dst, v.Bool()), true }
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(dst []byte, v reflect.Value) ([]byte, bool) { return strconv.AppendInt(dst, v.Int(), 10), true }
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return func(dst []byte, v reflect.Value) ([]byte, bool) { return strconv.AppendUint(dst, v.Uint(), 10), true }
	case reflect.Pointer:
		elem := encoderFor(t.Elem())
		if elem == nil {
			return nil
		}
		return func(dst []byte, v reflect.Value) ([]byte, bool) {
			if v.IsNil() {
				return append(dst, "null"...), true
			}
			return elem(dst, v.Elem())
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil // base64
		}
		elem := encoderFor(t.Elem())
		if elem == nil {
			return nil
		}
		return func(dst []byte, v reflect.Value) ([]byte, bool) {
			if v.IsNil() {
				return append(dst, "null"...), true
			}
			dst = append(dst, '[')
			for i := range v.Len() {
				if i > 0 {
					dst = append(dst, ',')
				}
				var ok bool
				if dst, ok = elem(dst, v.Index(i)); !ok {
					return nil, false
				}
			}
			return append(dst, ']'), true
		}
	case reflect.Map:
		if t.Key().Kind() != reflect.String || t.Key().Implements(reflect.TypeFor[interface{ MarshalText() ([]byte, error) }]()) {
			return nil
		}
		elem := encoderFor(t.Elem())
		if elem == nil {
			return nil
		}
		return func(dst []byte, v reflect.Value) ([]byte, bool) {
			if v.IsNil() {
				return append(dst, "null"...), true
			}
			keys := v.MapKeys()
			slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
			dst = append(dst, '{')
			for i, k := range keys {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = append(encodeString(dst, k.String()), ':')
				var ok bool
				if dst, ok = elem(dst, v.MapIndex(k)); !ok {
					return nil, false
				}
			}
			return append(dst, '}'), true
		}
	case reflect.Struct:
		return structEncoder(t)
	}
	return nil
}

// encodeRaw copies a json.RawMessage that is compact JSON (what
// encoding/json writes for it); any other makes encoding/json encode the
// record (it compacts the message, or fails on it).
func encodeRaw(dst []byte, v reflect.Value) ([]byte, bool) {
	if v.IsNil() {
		return append(dst, "null"...), true
	}
	b := v.Bytes()
	if !jsonscan.Compact(b) {
		return nil, false
	}
	return append(dst, b...), true
}

// field is one member a struct encodes.
type field struct {
	index     []int
	head      string // "name": (with the comma when it is not first)
	omitEmpty bool
	enc       encFn
}

func structEncoder(t reflect.Type) encFn {
	fs, ok := structFields(t, nil, map[string]bool{})
	if !ok {
		return nil
	}
	return func(dst []byte, v reflect.Value) ([]byte, bool) {
		dst = append(dst, '{')
		first := true
		for i := range fs {
			f := &fs[i]
			fv := v.FieldByIndex(f.index)
			if f.omitEmpty && isEmpty(fv) {
				continue
			}
			if first {
				dst = append(dst, f.head[1:]...)
				first = false
			} else {
				dst = append(dst, f.head...)
			}
			var ok bool
			if dst, ok = f.enc(dst, fv); !ok {
				return nil, false
			}
		}
		return append(dst, '}'), true
	}
}

// structFields lists t's members in encoding/json's order (declaration
// order, embedded structs in place); false for what the plan does not
// model: a name twice (encoding/json's dominance rules), an embedded
// pointer or non-struct, a tag option other than omitempty, a name
// encoding/json would escape or reject.
func structFields(t reflect.Type, index []int, seen map[string]bool) ([]field, bool) {
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
			sub, ok := structFields(sf.Type, idx, seen)
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
		enc := encoderFor(sf.Type)
		if enc == nil {
			return nil, false
		}
		out = append(out, field{index: idx, head: `,"` + name + `":`, omitEmpty: omit, enc: enc})
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
