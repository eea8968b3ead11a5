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
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// SkipSpace returns the index of the first byte at or after i that is not
// JSON whitespace (len(b) if none).
func SkipSpace(b []byte, i int) int {
	for i < len(b) && b[i] <= ' ' && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// StringEnd returns the index after the string that starts at b[i] (a
// '"'): the next quote not escaped. ok is false when the string does not
// end or holds a raw control character.
func StringEnd(b []byte, i int) (end int, ok bool) {
	for j := i + 1; j < len(b); j++ {
		if j = skipPlain(b, j); j >= len(b) {
			break
		}
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

// skipPlain skips bytes of a string from b[j] eight at a time while none
// is a quote, a backslash or a control character, and returns the index
// of the first such byte in the block that holds one (or of the last
// bytes, fewer than eight, left to be looked at byte by byte).
func skipPlain(b []byte, j int) int {
	for j+8 <= len(b) {
		if m := specialMask(binary.LittleEndian.Uint64(b[j:])); m != 0 {
			return j + bits.TrailingZeros64(m)>>3
		}
		j += 8
	}
	return j
}

// special8 reports whether one of the eight bytes of x may be '"', '\\' or
// below 0x20 (never false when one is).
func special8(x uint64) bool { return specialMask(x) != 0 }

// specialMask has the high bit of a byte of x set where x may hold '"',
// '\\' or a byte below 0x20; its lowest set bit is exact (the first such
// byte: a false positive only follows a true one, through the borrow).
func specialMask(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q, bs := x^('"'*ones), x^('\\'*ones)
	return ((x-0x20*ones)&^x | (q-ones)&^q | (bs-ones)&^bs) & highs
}

// EscapeMask has the high bit of a byte of the little-endian word x set where x may hold a
// byte a JSON string does not hold as it is, or one beyond ASCII: '"', '\\', below 0x20,
// 0x80 and up. Its lowest set bit is exact (the first such byte), and 0 means none of the
// eight is one: the one word-at-a-time test of the project's encoders and scanners.
//
// It is specialMask without its three &^ terms, which only clear the high bit of a byte
// 0x80 and up: such a byte keeps it in (q - ones) unless it is 0xa2, and in (bs - ones)
// unless it is 0xdc. A byte below every flagged one takes no borrow, so its bit is exact;
// a false positive only follows a true one (TestEscapeMask checks it byte by byte).
func EscapeMask(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q, bs := x^('"'*ones), x^('\\'*ones)
	return ((x - 0x20*ones) | (q - ones) | (bs - ones)) & highs
}

// skipASCII is skipPlain stopping also at a byte beyond ASCII (EscapeMask),
// sixteen bytes a round while sixteen are left: one bounds check and one
// loop test for two words.
func skipASCII(b []byte, j int) int {
	for j+16 <= len(b) {
		w := (*[16]byte)(b[j : j+16])
		if m := EscapeMask(binary.LittleEndian.Uint64(w[:8])); m != 0 {
			return j + bits.TrailingZeros64(m)>>3
		}
		if m := EscapeMask(binary.LittleEndian.Uint64(w[8:])); m != 0 {
			return j + 8 + bits.TrailingZeros64(m)>>3
		}
		j += 16
	}
	if j+8 <= len(b) {
		if m := EscapeMask(binary.LittleEndian.Uint64(b[j:])); m != 0 {
			return j + bits.TrailingZeros64(m)>>3
		}
		j += 8
	}
	return j
}

// SkipASCII returns the index of the first byte from b[i] on that EscapeMask
// flags ('"', '\\', below 0x20, 0x80 and up), or an index of the last seven
// bytes from which the caller looks byte by byte (all before it are plain).
func SkipASCII(b []byte, i int) int { return skipASCII(b, i) }

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
	b, ok := unescape(make([]byte, 0, len(body)+8), body)
	if !ok {
		return "", false
	}
	return string(b), true
}

// unescape appends the decoded string body to dst exactly as
// encoding/json.Unmarshal decodes "body" into a string (escapes decoded, a
// lone or broken surrogate escape and every byte of invalid UTF-8 replaced
// by U+FFFD); ok is false where Unmarshal fails (an unknown escape, a
// control character, a bare quote).
func unescape(dst, body []byte) ([]byte, bool) {
	for r := 0; r < len(body); {
		// A run of printable ASCII other than '"' and '\\', eight bytes at a time.
		if j := r; j+8 <= len(body) && ascii8(binary.LittleEndian.Uint64(body[j:])) {
			for j += 8; j+8 <= len(body) && ascii8(binary.LittleEndian.Uint64(body[j:])); j += 8 {
			}
			dst = append(dst, body[r:j]...)
			r = j
			continue
		}
		c := body[r]
		switch {
		case c == '\\':
			if r+1 >= len(body) {
				return dst, false
			}
			switch body[r+1] {
			case '"', '\\', '/':
				dst = append(dst, body[r+1])
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				rr := getu4(body[r:])
				if rr < 0 {
					return dst, false
				}
				r += 6
				if utf16.IsSurrogate(rr) {
					if dec := utf16.DecodeRune(rr, getu4(body[r:])); dec != unicode.ReplacementChar {
						dst = utf8.AppendRune(dst, dec)
						r += 6
						continue
					}
					rr = unicode.ReplacementChar
				}
				dst = utf8.AppendRune(dst, rr)
				continue
			default:
				return dst, false
			}
			r += 2
		case c == '"' || c < 0x20:
			return dst, false
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			r++
		default:
			rr, size := utf8.DecodeRune(body[r:])
			dst = utf8.AppendRune(dst, rr)
			r += size
		}
	}
	return dst, true
}

// ascii8 reports whether the eight bytes of x are all printable ASCII
// other than '"' and '\\' (special8 false, and no byte beyond ASCII).
func ascii8(x uint64) bool { return x&0x8080808080808080 == 0 && !special8(x) }

// getu4 decodes \uXXXX at the start of b; -1 when there is none.
func getu4(b []byte) rune {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range b[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// String decodes a raw JSON value that is a string (with its quotes).
func String(raw []byte) (string, bool) {
	body, ok := stringBody(raw)
	if !ok {
		return "", false
	}
	switch plainBody(body) {
	case bodyASCII:
		return string(body), true
	case bodyHigh:
		if utf8.Valid(body) {
			return string(body), true
		}
	}
	b, ok := unescape(make([]byte, 0, len(body)+8), body)
	if !ok {
		return "", false
	}
	return string(b), true
}

// stringBody is the inside of raw, a JSON string value with its quotes
// and maybe space around; false when raw is not quoted. Whether the inside
// is a string's is for the decoding to tell: unescape refuses a bare
// quote, a control character, a bad or trailing escape, so a quote that
// ends the string early or an escaped last quote is refused there (what
// StringEnd would have found).
func stringBody(raw []byte) ([]byte, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false
	}
	return raw[1 : len(raw)-1], true
}

const (
	bodyEscaped = iota // a quote, a backslash or a control character
	bodyASCII          // none, and only ASCII: the text is the bytes
	bodyHigh           // none, but bytes beyond ASCII (the text if valid UTF-8)
)

// plainBody classifies a string's inside, eight bytes at a time.
func plainBody(b []byte) int {
	const highs = 0x8080808080808080
	var acc uint64
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		if specialMask(x) != 0 {
			return bodyEscaped
		}
		acc |= x
	}
	for ; i < len(b); i++ {
		c := b[i]
		if c == '"' || c == '\\' || c < 0x20 {
			return bodyEscaped
		}
		acc |= uint64(c)
	}
	if acc&highs != 0 {
		return bodyHigh
	}
	return bodyASCII
}

// PlainASCII reports whether b, the inside of a JSON string, is printable
// ASCII without a quote or a backslash: its text is its bytes.
func PlainASCII(b []byte) bool { return plainBody(b) == bodyASCII }

// AppendString appends the text of raw, a JSON string value (with its
// quotes), to dst as String decodes it; on false dst is to be dropped.
func AppendString(dst, raw []byte) ([]byte, bool) {
	body, ok := stringBody(raw)
	if !ok {
		return dst, false
	}
	switch plainBody(body) {
	case bodyASCII:
		return append(dst, body...), true
	case bodyHigh:
		if utf8.Valid(body) {
			return append(dst, body...), true
		}
	}
	return unescape(dst, body)
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
