package jsonscan

// Compact reports whether b is one JSON value encoding/json accepts, with
// no whitespace at all outside its strings: then json.Compact(b) is b (and
// encoding/json writes a json.RawMessage b as b). It is one pass, without
// allocating; nesting deeper than MaxTapeDepth answers false.
func Compact(b []byte) bool {
	i, ok := compactValue(b, 0, 0)
	return ok && i == len(b)
}

func compactValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '{':
		if depth >= MaxTapeDepth {
			return i, false
		}
		i++
		if i < len(b) && b[i] == '}' {
			return i + 1, true
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return i, false
			}
			end, _, ok := ScanString(b, i)
			if !ok || end >= len(b) || b[end] != ':' {
				return i, false
			}
			if i, ok = compactValue(b, end+1, depth+1); !ok || i >= len(b) {
				return i, false
			}
			switch b[i] {
			case ',':
				i++
			case '}':
				return i + 1, true
			default:
				return i, false
			}
		}
	case c == '[':
		if depth >= MaxTapeDepth {
			return i, false
		}
		i++
		if i < len(b) && b[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = compactValue(b, i, depth+1); !ok || i >= len(b) {
				return i, false
			}
			switch b[i] {
			case ',':
				i++
			case ']':
				return i + 1, true
			default:
				return i, false
			}
		}
	case c == '"':
		end, _, ok := ScanString(b, i)
		return end, ok
	case c == '-' || (c >= '0' && c <= '9'):
		return scanNumber(b, i)
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	}
	return i, false
}
