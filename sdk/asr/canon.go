package asr

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"
)

// canonical appends the canonical form of the JSON object line to dst:
// what encoding/json writes for the value decoded into any with UseNumber
// and encoded again without HTML escaping — members sorted by key (a
// duplicate key keeps its last value), numbers as written, strings
// re-escaped as encoding/json escapes them, no insignificant whitespace.
// It walks the bytes once instead of building maps. line must be a valid
// JSON object (json.Valid). The top-level members named in drop are left
// out, and so is native.ref (native too when nothing else is left in it).
func canonical(dst, line []byte, drop []string) []byte {
	return canonObject(dst, bytes.TrimLeft(line, " \t\r\n"), drop, true)
}

// canonValue appends the canonical form of the valid JSON value at the
// start of v.
func canonValue(dst, v []byte) []byte {
	switch v[0] {
	case '{':
		return canonObject(dst, v, nil, false)
	case '[':
		dst = append(dst, '[')
		first := true
		forEachElement(v, func(e []byte) {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = canonValue(dst, e)
		})
		return append(dst, ']')
	case '"':
		return canonString(dst, v[:stringEnd(v, 0)])
	}
	return append(dst, v[:valueEnd(v, 0)]...)
}

// member is one member of an object being put in canonical form.
type member struct {
	key string
	val []byte
}

func canonObject(dst, v []byte, drop []string, top bool) []byte {
	var ms []member
	forEachMember(v, func(k, val []byte) {
		if key := decodeString(k); !slices.Contains(drop, key) {
			ms = append(ms, member{key, val})
		}
	})
	slices.SortStableFunc(ms, func(a, b member) int { return strings.Compare(a.key, b.key) })
	// A duplicate key keeps its last value, as in a map.
	kept := ms[:0]
	for i, m := range ms {
		if i+1 < len(ms) && ms[i+1].key == m.key {
			continue
		}
		kept = append(kept, m)
	}
	ms = kept
	dst = append(dst, '{')
	n := 0
	for _, m := range ms {
		val := m.val
		if top && m.key == "native" && bytes.TrimLeft(val, " \t\r\n")[0] == '{' {
			// native.ref names where the record came from, not what it says.
			inner := canonObject(nil, val, []string{"ref"}, false)
			if string(inner) == "{}" {
				continue
			}
			if n > 0 {
				dst = append(dst, ',')
			}
			n++
			dst = encodeString(dst, m.key)
			dst = append(dst, ':')
			dst = append(dst, inner...)
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = encodeString(dst, m.key)
		dst = append(dst, ':')
		dst = canonValue(dst, val)
	}
	return append(dst, '}')
}

// canonString re-escapes the JSON string q (with its quotes). A string
// with no escape and nothing encoding/json would escape is copied as is.
func canonString(dst, q []byte) []byte {
	body := q[1 : len(q)-1]
	if plainString(body) {
		return append(dst, q...)
	}
	return encodeString(dst, decodeString(body))
}

// plainString reports whether s (a string's bytes between the quotes) has
// no backslash and nothing encoding/json escapes: control characters,
// invalid UTF-8, U+2028 and U+2029.
func plainString(s []byte) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == '\\' || c == '"' {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			return false
		}
		i += size
	}
	return true
}

// decodeString decodes a string's bytes between the quotes as
// encoding/json does (invalid UTF-8 becomes U+FFFD).
func decodeString(body []byte) string {
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return string(body)
	}
	var s string
	q := make([]byte, 0, len(body)+2)
	q = append(append(append(q, '"'), body...), '"')
	_ = json.Unmarshal(q, &s)
	return s
}

// encodeString appends s as encoding/json writes a string without HTML
// escaping.
func encodeString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// The walkers below assume valid JSON.

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index after the string that starts at b[i].
func stringEnd(b []byte, i int) int {
	i++
	for {
		j := bytes.IndexAny(b[i:], "\"\\")
		if b[i+j] == '"' {
			return i + j + 1
		}
		i += j + 2 // a backslash and the byte it escapes
	}
}

// valueEnd returns the index after the value that starts at b[i].
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for {
			switch b[i] {
			case '"':
				i = stringEnd(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
		i++
	}
	return i
}

// forEachMember calls fn with each member's key (between its quotes, still
// escaped) and value of the object at the start of v.
func forEachMember(v []byte, fn func(k, val []byte)) {
	i := skipWS(v, 1)
	for i < len(v) && v[i] == '"' {
		ke := stringEnd(v, i)
		key := v[i+1 : ke-1]
		i = skipWS(v, ke)
		i = skipWS(v, i+1) // ':'
		ve := valueEnd(v, i)
		fn(key, v[i:ve])
		i = skipWS(v, ve)
		if v[i] == ',' {
			i = skipWS(v, i+1)
		}
	}
}

// forEachElement calls fn with each element of the array at the start of v.
func forEachElement(v []byte, fn func(e []byte)) {
	i := skipWS(v, 1)
	for i < len(v) && v[i] != ']' {
		ve := valueEnd(v, i)
		fn(v[i:ve])
		i = skipWS(v, ve)
		if v[i] == ',' {
			i = skipWS(v, i+1)
		}
	}
}
