package asr

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/acptap/acptap/internal/jsonscan"
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
	return canonObject(dst, bytes.TrimSpace(line), drop, true)
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
		jsonscan.Elements(v, func(e []byte) bool {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = canonValue(dst, e)
			return true
		})
		return append(dst, ']')
	case '"':
		return canonString(dst, v)
	}
	return append(dst, v...)
}

// member is one member of an object being put in canonical form.
type member struct {
	key string
	val []byte
}

func canonObject(dst, v []byte, drop []string, top bool) []byte {
	var ms []member
	jsonscan.Members(v, func(k, val []byte) bool {
		if key, _ := jsonscan.Unquote(k); !slices.Contains(drop, key) {
			ms = append(ms, member{key, val})
		}
		return true
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
		var done []byte // the value already in canonical form
		if top && m.key == "native" && m.val[0] == '{' {
			// native.ref names where the record came from, not what it says.
			if done = canonObject(nil, m.val, []string{"ref"}, false); string(done) == "{}" {
				continue
			}
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = encodeString(dst, m.key)
		dst = append(dst, ':')
		if done != nil {
			dst = append(dst, done...)
		} else {
			dst = canonValue(dst, m.val)
		}
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
	str, _ := jsonscan.Unquote(body)
	return encodeString(dst, str)
}

// plainString reports whether s (a string's bytes between the quotes) has
// no backslash and nothing encoding/json escapes: control characters,
// invalid UTF-8, U+2028 and U+2029.
func plainString(s []byte) bool {
	for i := 0; i < len(s); {
		for i+8 <= len(s) && plain8(binary.LittleEndian.Uint64(s[i:])) {
			i += 8
		}
		if i >= len(s) {
			break
		}
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

// plain8 reports whether none of the eight bytes of x is a control
// character, '"', '\\' or beyond ASCII.
func plain8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	return x&highs == 0 && (x-0x20*ones)&^x&highs == 0 && zero(x^('"'*ones)) == 0 && zero(x^('\\'*ones)) == 0
}

// encodeString appends s as encoding/json writes a string without HTML
// escaping.
func encodeString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Eight bytes at a time while all are printable ASCII other than
		// '"' and '\\' (copied as they are).
		for i+8 <= len(s) && plain8(uint64(s[i])|uint64(s[i+1])<<8|uint64(s[i+2])<<16|uint64(s[i+3])<<24|
			uint64(s[i+4])<<32|uint64(s[i+5])<<40|uint64(s[i+6])<<48|uint64(s[i+7])<<56) {
			i += 8
		}
		if i >= len(s) {
			break
		}
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
