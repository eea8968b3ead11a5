package acpschema

import (
	"encoding/json"
	"unicode/utf8"
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
// gives the value or the error. Strings with escapes or invalid UTF-8 are
// decoded by encoding/json itself, so their text is the same.
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
		k, ok := d.string()
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
		m[k.(string)] = v
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

// string decodes the string at d.b[d.i] ('"'). Plain strings (no escape,
// valid UTF-8) are taken as they are, which is what encoding/json does
// with them; any other is handed to encoding/json.
func (d *jsonDecoder) string() (any, bool) {
	start := d.i
	plain, ascii := true, true
	for j := start + 1; j < len(d.b); j++ {
		switch c := d.b[j]; {
		case c == '"':
			d.i = j + 1
			s := d.b[start+1 : j]
			if plain && (ascii || utf8.Valid(s)) {
				return string(s), true
			}
			var out string
			if json.Unmarshal(d.b[start:j+1], &out) != nil {
				return nil, false
			}
			return out, true
		case c == '\\':
			plain = false
			j++ // the escaped byte; encoding/json checks the escape
		case c < 0x20:
			return nil, false
		case c >= 0x80:
			ascii = false
		}
	}
	return nil, false
}

// number scans a JSON number (-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?)
// and returns its text as a json.Number.
func (d *jsonDecoder) number() (any, bool) {
	b, i := d.b, d.i
	start := i
	if b[i] == '-' {
		i++
	}
	digits := func() bool {
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > j
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		digits()
	default:
		return nil, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return nil, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return nil, false
		}
	}
	d.i = i
	return json.Number(b[start:i]), true
}
