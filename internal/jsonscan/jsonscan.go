// Package jsonscan walks JSON text in one pass without decoding it: the
// members of an object and the elements of an array are handed out as the
// raw bytes of their values, so that a mapper decodes only what it reads.
// encoding/json validates and reflects over a whole value on every
// Unmarshal; reading a few members of a large line that way scans it many
// times.
//
// The walk checks the syntax of the level it walks (quotes, colons,
// commas, brackets, and each scalar with json.Valid); a nested object or
// array is only matched by its brackets, strings skipped. Run json.Valid
// over a whole line once when nested values must be well-formed too.
package jsonscan

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// SkipSpace returns the index of the first byte at or after i that is not
// JSON whitespace (len(b) if none).
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// StringEnd returns the index after the string that starts at b[i] (a
// '"'): the next quote not escaped. ok is false when the string does not
// end or holds a raw control character.
func StringEnd(b []byte, i int) (end int, ok bool) {
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

// ValueEnd returns the index after the JSON value that starts at b[i]. A
// string ends at its closing quote, an object or array at its matching
// bracket (strings inside skipped); a number or literal ends at the next
// delimiter and must be valid JSON on its own.
func ValueEnd(b []byte, i int) (end int, ok bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		return StringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, ok := StringEnd(b, j)
				if !ok {
					return 0, false
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, true
				}
			}
		}
		return 0, false
	}
	j := i
	for j < len(b) && !delimiter(b[j]) {
		j++
	}
	if j == i || !json.Valid(b[i:j]) {
		return 0, false
	}
	return j, true
}

func delimiter(c byte) bool {
	switch c {
	case ',', '}', ']', ':', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

// Members calls fn with each member of the object that is the whole of
// obj (surrounding whitespace allowed), in order: key is the member name
// as written, between its quotes, escapes not decoded (Unquote decodes
// it); val is the raw value. It stops early when fn returns false. ok is
// false when obj is not one well-formed object; fn may have been called
// for the members before the problem.
func Members(obj []byte, fn func(key, val []byte) bool) (ok bool) {
	i := SkipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	i = SkipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return SkipSpace(obj, i+1) == len(obj)
	}
	for {
		if i >= len(obj) || obj[i] != '"' {
			return false
		}
		kend, ok := StringEnd(obj, i)
		if !ok {
			return false
		}
		key := obj[i+1 : kend-1]
		i = SkipSpace(obj, kend)
		if i >= len(obj) || obj[i] != ':' {
			return false
		}
		i = SkipSpace(obj, i+1)
		vend, ok := ValueEnd(obj, i)
		if !ok {
			return false
		}
		if !fn(key, obj[i:vend]) {
			return true
		}
		i = SkipSpace(obj, vend)
		if i >= len(obj) {
			return false
		}
		switch obj[i] {
		case ',':
			i = SkipSpace(obj, i+1)
		case '}':
			return SkipSpace(obj, i+1) == len(obj)
		default:
			return false
		}
	}
}

// Elements calls fn with each element of the array that is the whole of
// arr, in order, as Members does for an object.
func Elements(arr []byte, fn func(val []byte) bool) (ok bool) {
	i := SkipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return false
	}
	i = SkipSpace(arr, i+1)
	if i < len(arr) && arr[i] == ']' {
		return SkipSpace(arr, i+1) == len(arr)
	}
	for {
		end, ok := ValueEnd(arr, i)
		if !ok {
			return false
		}
		if !fn(arr[i:end]) {
			return true
		}
		i = SkipSpace(arr, end)
		if i >= len(arr) {
			return false
		}
		switch arr[i] {
		case ',':
			i = SkipSpace(arr, i+1)
		case ']':
			return SkipSpace(arr, i+1) == len(arr)
		default:
			return false
		}
	}
}

// Unquote decodes a string's contents as written between its quotes (a
// key from Members, or a string value without its quotes) as
// encoding/json does: escapes decoded, invalid UTF-8 replaced by U+FFFD.
// ok is false when it is not the inside of a JSON string.
func Unquote(body []byte) (s string, ok bool) {
	if plain(body) {
		return string(body), true
	}
	q := make([]byte, 0, len(body)+2)
	q = append(append(append(q, '"'), body...), '"')
	if json.Unmarshal(q, &s) != nil {
		return "", false
	}
	return s, true
}

// String decodes a raw JSON value that is a string (with its quotes).
func String(raw []byte) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if end, ok := StringEnd(raw, 0); !ok || end != len(raw) {
		return "", false
	}
	return Unquote(raw[1 : len(raw)-1])
}

// plain reports whether body needs no decoding: no escape, no control
// character, valid UTF-8 (one pass over ASCII, the common case).
func plain(body []byte) bool {
	for i, c := range body {
		if c == '\\' || c < 0x20 {
			return false
		}
		if c >= utf8.RuneSelf {
			return bytes.IndexByte(body[i:], '\\') < 0 && utf8.Valid(body[i:]) && !hasControl(body[i:])
		}
	}
	return true
}

func hasControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}
