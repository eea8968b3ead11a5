package acpschema

import (
	"encoding/json"
	"sync"
	"unicode/utf8"

	"github.com/acptap/acptap/internal/jsonscan"
)

// maxDecodeDepth bounds the nesting decodeJSON follows; deeper input is
// left to encoding/json (whose own limit is 10,000).
const maxDecodeDepth = 500

// decodeJSON decodes one JSON value (with only whitespace around it) into
// exactly what jsonschema.UnmarshalJSON returns for it (encoding/json into
// any with UseNumber): map[string]any with the last of duplicate keys,
// []any (empty, not nil, for []), string, json.Number holding the number's
// text, bool and nil. It is a strict one-pass parser; it reports false for
// anything it does not accept (invalid JSON, or nesting deeper than
// maxDecodeDepth), and the caller then decodes with encoding/json, which
// gives the value or the error. Strings with \u escapes or invalid UTF-8
// are decoded by encoding/json itself, so their text is the same.
func decodeJSON(b []byte) (any, bool) {
	d := jsonDecoder{b: b}
	d.space()
	v, ok := d.value(0)
	if !ok {
		return nil, false
	}
	d.space()
	return v, d.i == len(d.b)
}

type jsonDecoder struct {
	b []byte
	i int
}

func (d *jsonDecoder) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *jsonDecoder) value(depth int) (any, bool) {
	if d.i >= len(d.b) {
		return nil, false
	}
	switch c := d.b[d.i]; {
	case c == '{':
		return d.object(depth + 1)
	case c == '[':
		return d.array(depth + 1)
	case c == '"':
		return d.string()
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	}
	return nil, false
}

func (d *jsonDecoder) literal(lit string) bool {
	if len(d.b)-d.i < len(lit) || string(d.b[d.i:d.i+len(lit)]) != lit {
		return false
	}
	d.i += len(lit)
	return true
}

func (d *jsonDecoder) object(depth int) (any, bool) {
	if depth > maxDecodeDepth {
		return nil, false
	}
	m := map[string]any{}
	d.i++ // {
	d.space()
	if d.i < len(d.b) && d.b[d.i] == '}' {
		d.i++
		return m, true
	}
	for {
		if d.i >= len(d.b) || d.b[d.i] != '"' {
			return nil, false
		}
		k, ok := d.key()
		if !ok {
			return nil, false
		}
		d.space()
		if d.i >= len(d.b) || d.b[d.i] != ':' {
			return nil, false
		}
		d.i++
		d.space()
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		m[k] = v
		d.space()
		if d.i >= len(d.b) {
			return nil, false
		}
		switch d.b[d.i] {
		case ',':
			d.i++
			d.space()
		case '}':
			d.i++
			return m, true
		default:
			return nil, false
		}
	}
}

func (d *jsonDecoder) array(depth int) (any, bool) {
	if depth > maxDecodeDepth {
		return nil, false
	}
	a := make([]any, 0)
	d.i++ // [
	d.space()
	if d.i < len(d.b) && d.b[d.i] == ']' {
		d.i++
		return a, true
	}
	for {
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		d.space()
		if d.i >= len(d.b) {
			return nil, false
		}
		switch d.b[d.i] {
		case ',':
			d.i++
			d.space()
		case ']':
			d.i++
			return a, true
		default:
			return nil, false
		}
	}
}

// string decodes the string at d.b[d.i] ('"') as a value; the names and
// values the schemas spell are shared, not allocated.
func (d *jsonDecoder) string() (any, bool) {
	body, k := d.str()
	switch k {
	case strBad:
		return nil, false
	case strPlain:
		if len(body) <= maxInterned {
			if v, ok := interned().values[string(body)]; ok {
				return v, true
			}
		}
	}
	return decodeStr(body, k)
}

// key decodes the member name at d.b[d.i] ('"').
func (d *jsonDecoder) key() (string, bool) {
	body, k := d.str()
	switch k {
	case strBad:
		return "", false
	case strPlain:
		if len(body) <= maxInterned {
			if s, ok := interned().keys[string(body)]; ok {
				return s, true
			}
		}
	}
	return decodeStr(body, k)
}

// What str found in a string.
const (
	strBad     = iota // not a JSON string
	strPlain          // no escapes, valid UTF-8: the text is the bytes
	strEscaped        // one-character escapes only, valid UTF-8
	strOther          // \u escapes or invalid UTF-8: for encoding/json
)

// str scans the string at d.b[d.i] ('"') and returns its bytes between
// the quotes (for strOther, with the quotes).
func (d *jsonDecoder) str() ([]byte, int) {
	start := d.i
	plain, ascii, other := true, true, false
	for j := start + 1; j < len(d.b); j++ {
		switch c := d.b[j]; {
		case c == '"':
			d.i = j + 1
			body := d.b[start+1 : j]
			switch {
			case other || (!ascii && !utf8.Valid(body)):
				return d.b[start : j+1], strOther
			case plain:
				return body, strPlain
			}
			return body, strEscaped
		case c == '\\':
			plain = false
			j++
			if j >= len(d.b) {
				return nil, strBad
			}
			switch d.b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				other = true // encoding/json checks the four hex digits
			default:
				return nil, strBad
			}
		case c < 0x20:
			return nil, strBad
		case c >= 0x80:
			ascii = false
		}
	}
	return nil, strBad
}

// decodeStr is the text of a string str scanned, as encoding/json gives it.
func decodeStr(b []byte, k int) (string, bool) {
	switch k {
	case strPlain:
		return string(b), true
	case strEscaped:
		return unescape(b), true
	}
	var out string
	if json.Unmarshal(b, &out) != nil {
		return "", false
	}
	return out, true
}

// unescape undoes the one-character escapes of b, valid UTF-8 whose
// escapes str has checked (no \u).
func unescape(b []byte) string {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		switch b[i] {
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		default: // " \ /
			c = b[i]
		}
		out = append(out, c)
	}
	return string(out)
}

// maxInterned is the length of the longest string interned.
const maxInterned = 40

type internTable struct {
	keys   map[string]string
	values map[string]any
}

var (
	internOnce sync.Once
	internTab  internTable
)

// interned returns the names and the short string values of the embedded
// schemas (property names, const and enum values, keywords): the strings
// most frames are made of, each allocated once. They are listed in
// interned_strings.go, written from the schemas by
// `go test ./internal/acpschema -run TestInternedStrings -update`: reading
// them from the schemas at the first decode parsed all four (~1.5 MB of
// JSON, ~40 ms) in every process that decodes a frame this way (the aep
// plugin's first frame), for a table of ~1,300 strings.
func interned() *internTable {
	internOnce.Do(func() { internTab = newInternTable() })
	return &internTab
}

func newInternTable() internTable {
	t := internTable{keys: make(map[string]string, len(internedStrings)), values: make(map[string]any, len(internedStrings))}
	for _, s := range internedStrings {
		t.keys[s] = s
		t.values[s] = s
	}
	return t
}

// number scans a JSON number (jsonscan.NumberEnd) and returns its text as
// a json.Number.
func (d *jsonDecoder) number() (any, bool) {
	start := d.i
	end, ok := jsonscan.NumberEnd(d.b, d.i)
	if !ok {
		return nil, false
	}
	d.i = end
	return json.Number(d.b[start:end]), true
}
