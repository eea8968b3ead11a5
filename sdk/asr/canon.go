package asr

import (
	"bytes"
	"slices"
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

// member is one member of an object being put in canonical form: its
// name decoded (key; plain: the name's text is written as it stands,
// plainString).
type member struct {
	key   []byte
	plain bool
	val   []byte
}

func canonObject(dst, v []byte, drop []string, top bool) []byte {
	var buf [8]member
	ms := buf[:0]
	jsonscan.Members(v, func(k, val []byte) bool {
		m := member{key: k, val: val, plain: plainString(k)}
		if !m.plain {
			key, _ := jsonscan.Unquote(k)
			m.key = []byte(key)
		}
		if !slices.Contains(drop, string(m.key)) {
			ms = append(ms, m)
		}
		return true
	})
	slices.SortStableFunc(ms, func(a, b member) int { return bytes.Compare(a.key, b.key) })
	// A duplicate key keeps its last value, as in a map.
	kept := ms[:0]
	for i, m := range ms {
		if i+1 < len(ms) && bytes.Equal(ms[i+1].key, m.key) {
			continue
		}
		kept = append(kept, m)
	}
	ms = kept
	dst = append(dst, '{')
	n := 0
	for _, m := range ms {
		var done []byte // the value already in canonical form
		if top && string(m.key) == "native" && m.val[0] == '{' {
			// native.ref names where the record came from, not what it says.
			if done = canonObject(nil, m.val, []string{"ref"}, false); string(done) == "{}" {
				continue
			}
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		if m.plain {
			dst = append(append(append(dst, '"'), m.key...), '"')
		} else {
			dst = encodeString(dst, string(m.key))
		}
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
// already written as encodeString writes its text is copied as is.
func canonString(dst, q []byte) []byte {
	body := q[1 : len(q)-1]
	if canonEscaped(body) {
		return append(dst, q...)
	}
	str, _ := jsonscan.Unquote(body)
	return encodeString(dst, str)
}

// canonEscaped reports whether s (a valid JSON string's bytes between the
// quotes) is what encodeString writes for the text it holds: valid UTF-8
// without U+2028 and U+2029, and only the escapes encodeString writes
// (\" \\ \b \f \n \r \t, \u00xx in lower-case hex for the other control
// characters, \u2028 and \u2029). A string with no escape is plainString.
func canonEscaped(s []byte) bool { return scanCanon(s, true) }

// plainString reports whether s (a string's bytes between the quotes) has
// no backslash and nothing encoding/json escapes: control characters,
// invalid UTF-8, U+2028 and U+2029.
func plainString(s []byte) bool { return scanCanon(s, false) }

// scanCanon is canonEscaped, or with escapes false plainString: one scan
// for both, a backslash refused at once when no escape may appear.
func scanCanon(s []byte, escapes bool) bool {
	for i := 0; i < len(s); {
		i = jsonscan.SkipASCII(s, i) // to the first byte that needs a look, sixteen a round
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\\':
				if !escapes || i+1 >= len(s) {
					return false
				}
				switch s[i+1] {
				case '"', '\\', 'b', 'f', 'n', 'r', 't':
					i += 2
					continue
				case 'u':
					if i+6 > len(s) {
						return false
					}
					h := s[i+2 : i+6]
					switch {
					case h[0] == '0' && h[1] == '0' && (h[2] == '0' || h[2] == '1') && lowerHex(h[3]):
						switch (h[2]-'0')<<4 | hexVal(h[3]) {
						case '\b', '\f', '\n', '\r', '\t':
							return false // written short
						}
					case string(h) == "2028" || string(h) == "2029":
					default:
						return false
					}
					i += 6
					continue
				}
				return false
			case c < 0x20 || c == '"':
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

func lowerHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }

// hexVal is the value of the lower-case hex digit c.
func hexVal(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

// encodeString appends s as encoding/json writes a string without HTML
// escaping.
func encodeString(dst []byte, s string) []byte {
	dst, _ = appendString(dst, s)
	return dst
}

// appendString is encodeString, and reports whether s was valid UTF-8
// (then what it wrote is also the string's canonical form: canonText).
func appendString(dst []byte, s string) ([]byte, bool) {
	const hex = "0123456789abcdef"
	valid := true
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Eight bytes at a time while all are printable ASCII other than
		// '"' and '\\' (copied as they are).
		for i+8 <= len(s) && jsonscan.EscapeMask(uint64(s[i])|uint64(s[i+1])<<8|uint64(s[i+2])<<16|uint64(s[i+3])<<24|
			uint64(s[i+4])<<32|uint64(s[i+5])<<40|uint64(s[i+6])<<48|uint64(s[i+7])<<56) == 0 {
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
			valid = false
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
	return append(dst, '"'), valid
}

// AppendText appends to dst the text of raw, a JSON string value (with
// its quotes), escaped as Marshal escapes a string, without the quotes:
// what Marshal writes between the quotes for the string raw decodes to.
// A string already written so (canonEscaped) is copied; any other is
// decoded (internal/jsonscan.String) and escaped again. ok is false when
// raw is not a JSON string (dst is then to be dropped). The text of a
// JSON string decodes to valid UTF-8 and Marshal escapes it rune by rune,
// so the texts of several strings appended one after the other are the
// text of their decoded texts joined.
func AppendText(dst, raw []byte) ([]byte, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && canonEscaped(raw[1:len(raw)-1]) {
		return append(dst, raw[1:len(raw)-1]...), true
	}
	s, ok := jsonscan.String(raw)
	if !ok {
		return dst, false
	}
	n := len(dst)
	dst = encodeString(dst, s)
	copy(dst[n:], dst[n+1:len(dst)-1])
	return dst[:len(dst)-2], true
}
