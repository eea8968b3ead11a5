package asr

import (
	"reflect"
	"unsafe"
)

// emptyKind is how a member's emptiness (omitempty) is read from its
// struct's memory without reflect: most of a record's optional members
// are empty, and Prepare then takes neither their reflect.Value nor
// isEmpty's.
type emptyKind uint8

const (
	emptyByReflect emptyKind = iota // isEmpty of its reflect.Value
	emptyString                     // len 0
	emptySlice                      // len 0
	emptyNil                        // a pointer: nil
	emptyMap                        // nil is empty; otherwise isEmpty
	emptyBool                       // false
)

// setEmptyPlan sets f.off and f.empty from its place in struct type t
// (its index: fields of embedded structs, never through a pointer, as
// structFields takes them).
func (f *field) setEmptyPlan(t reflect.Type) {
	var off uintptr
	for _, i := range f.index {
		sf := t.Field(i)
		off += sf.Offset
		t = sf.Type
	}
	f.off = off
	switch t.Kind() {
	case reflect.String:
		f.empty = emptyString
	case reflect.Slice:
		f.empty = emptySlice
	case reflect.Pointer:
		f.empty = emptyNil
	case reflect.Map:
		f.empty = emptyMap
	case reflect.Bool:
		f.empty = emptyBool
	default:
		f.empty = emptyByReflect
	}
}

// emptyIn reports whether f is empty in the struct at base (of the type
// setEmptyPlan was given); known false: ask isEmpty.
func (f *field) emptyIn(base unsafe.Pointer) (empty, known bool) {
	p := unsafe.Add(base, f.off)
	switch f.empty {
	case emptyString:
		return len(*(*string)(p)) == 0, true
	case emptySlice:
		return len(*(*[]byte)(p)) == 0, true // every slice's header is a []byte's
	case emptyNil:
		return *(*unsafe.Pointer)(p) == nil, true
	case emptyMap:
		if *(*unsafe.Pointer)(p) == nil {
			return true, true
		}
	case emptyBool:
		return !*(*bool)(p), true
	}
	return false, false
}

// omitted reports whether f is omitempty and empty in the struct the
// cursor reads (base: its address, or nil when it has none).
func (c *fieldCursor) omitted(f *field, base unsafe.Pointer) bool {
	if !f.omitEmpty {
		return false
	}
	if base != nil && f.empty != emptyByReflect {
		if e, ok := f.emptyIn(base); ok {
			return e
		}
	}
	return isEmpty(c.at(f))
}

// addr is the address of the struct v, or nil when v is not addressable.
func addr(v reflect.Value) unsafe.Pointer {
	if !v.CanAddr() {
		return nil
	}
	return unsafe.Pointer(v.UnsafeAddr())
}
