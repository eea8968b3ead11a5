package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// Scrubbed replaces every MCP server configuration value Scrub removes.
const Scrubbed = "[scrubbed]"

var (
	keyMcpServers = []byte("mcpServers")
	keyMeta       = []byte("_meta")
	unicodeEscape = []byte(`\u`)
	scrubbedJSON  = json.RawMessage(`"` + Scrubbed + `"`)
	jsonNull      = []byte("null")
)

// Scrub removes MCP server configuration values from a client-to-agent line
// (ASR-712). Wherever the line's JSON has a member whose key is mcpServers
// (compared case-insensitively, after unescaping) — params.mcpServers of
// session/new, session/resume, session/fork and ACP v1's session/load, a
// copy under _meta, any nesting — each server's env and header values and
// each of its args become "[scrubbed]". Names, type, command, url and other
// server fields stay. Rebuilt objects keep their member order and every
// untouched value's bytes; insignificant whitespace between members is lost.
//
// The _meta members of the line (on lines up to maxMetaLine bytes) are
// scrubbed as scrubMeta says.
//
// It fails closed: a line that may hold such a key in any spelling (plain
// or with \u escapes) but is not exactly one JSON value the scrubber can
// walk — not JSON, two values on one line, nesting deeper than
// maxScrubDepth around the key — is cut where the key could start and
// marked with scrubbedCut, never kept verbatim (and a line cut so is
// returned as it is when scrubbed again).
// A line that cannot spell the key is returned unchanged after a byte
// check. Scrub never panics and never modifies line.
func Scrub(line []byte) (out []byte, changed bool) {
	esc := notSearched
	if !mayHoldKey(line, keyMcpServers, &esc) && (len(line) > maxMetaLine || !mayHoldKey(line, keyMeta, &esc)) {
		return line, false
	}
	raw := bytes.TrimSpace(line)
	if json.Valid(raw) {
		v, ok, err := scrubTree(raw, 0)
		if err == nil {
			if !ok {
				return line, false
			}
			return v, true
		}
	}
	if !mayHoldKey(line, keyMcpServers, &esc) {
		return line, false // _meta is walked on valid lines only
	}
	return cutUnparsed(line), true
}

// maxMetaLine is the longest line whose _meta members Scrub walks when the
// line cannot spell mcpServers: walking re-reads each level of the line, so
// a prompt of hundreds of MiB would be copied several times over for the
// secret patterns of its _meta (see docs/wire-log.md).
const maxMetaLine = 8 << 20

// maxScrubDepth bounds how deep scrubTree descends to find mcpServers: each
// level re-reads its value, so a key under 9 000 levels would cost that many
// passes over the line. Deeper, the line is cut instead.
const maxScrubDepth = 64

// scrubTree scrubs every mcpServers member in a valid JSON value. ok reports
// a change; err, a value that may hold the key deeper than maxScrubDepth.
func scrubTree(raw []byte, depth int) (json.RawMessage, bool, error) {
	if len(raw) == 0 || (raw[0] != '{' && raw[0] != '[') || !mayHoldServersKey(raw) {
		return nil, false, nil
	}
	if depth >= maxScrubDepth {
		return nil, false, errTooDeep
	}
	if raw[0] == '[' {
		elems, err := arrayElems(raw)
		if err != nil {
			return nil, false, err
		}
		changed := false
		for i, el := range elems {
			s, ok, err := scrubTree(el, depth+1)
			if err != nil {
				return nil, false, err
			}
			if ok {
				elems[i], changed = s, true
			}
		}
		if !changed {
			return nil, false, nil
		}
		return encodeArray(elems), true, nil
	}
	ms, err := objectMembers(raw)
	if err != nil {
		return nil, false, err
	}
	changed := false
	for i := range ms {
		if strings.EqualFold(ms[i].key, "mcpServers") {
			if s, ok := scrubServers(ms[i].val); ok {
				ms[i].val, changed = s, true
			}
			continue
		}
		if strings.EqualFold(ms[i].key, "_meta") {
			if s, ok := scrubMeta(ms[i].val, depth+1); ok {
				ms[i].val, changed = s, true
			}
			continue
		}
		s, ok, err := scrubTree(ms[i].val, depth+1)
		if err != nil {
			return nil, false, err
		}
		if ok {
			ms[i].val, changed = s, true
		}
	}
	if !changed {
		return nil, false, nil
	}
	return encodeObject(ms), true, nil
}

// scrubbedCut ends a line Scrub had to cut.
const scrubbedCut = " [scrubbed: not fully parsed]"

var errTooDeep = errors.New("mcpServers nested too deep to scrub")

// mayHoldServersKey reports whether b can spell mcpServers or _meta as a
// JSON string (see mayHoldKey).
func mayHoldServersKey(b []byte) bool {
	esc := notSearched
	return mayHoldKey(b, keyMcpServers, &esc) || mayHoldKey(b, keyMeta, &esc)
}

// notSearched: mayHoldKey has not looked for b's first \u yet.
const notSearched = -2

// mayHoldKey reports whether b can spell key as a JSON string: plainly (in
// any case), in a quoted string with \u escapes that decodes to it, or in
// one too broken to decode. *esc is the index of b's first \u (-1: none), or
// notSearched: it is found once for every key looked for in the same b (on
// text with escaped quotes and newlines the search stops at each backslash).
func mayHoldKey(b, key []byte, esc *int) bool {
	if indexFold(b, key) >= 0 {
		return true
	}
	if *esc == notSearched {
		*esc = bytes.Index(b, unicodeEscape)
	}
	for i := *esc; i >= 0; {
		start := bytes.LastIndexByte(b[:i], '"')
		end := stringEnd(b, i)
		if start < 0 || end < 0 {
			return true // not a string we can read
		}
		var s string
		if json.Unmarshal(b[start:end+1], &s) != nil || indexFold([]byte(s), key) >= 0 {
			return true
		}
		next := bytes.Index(b[end+1:], unicodeEscape)
		if next < 0 {
			break
		}
		i = end + 1 + next
	}
	return false
}

// stringEnd returns the index of the quote closing the JSON string that
// holds position i, or -1.
func stringEnd(b []byte, i int) int {
	for ; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

// indexFold is bytes.Index ignoring ASCII case.
//
// The keys are ASCII, so a window of len(sub) bytes equals sub under
// bytes.EqualFold only if it is ASCII too (a multi-byte rune leaves it
// fewer runes than sub, an invalid byte is U+FFFD): the search looks for
// the key's rarest letter, in either case, with bytes.IndexByte, and
// compares the window around each hit (TestIndexFoldMatchesEqualFold).
func indexFold(b, sub []byte) int {
	n := len(sub)
	if n == 0 {
		return 0
	}
	k := foldAnchor(sub)
	lo, up := asciiLower(sub[k]), asciiUpper(sub[k])
	end := len(b) - (n - 1 - k) // anchor positions are < end
	nextLo, nextUp := -2, -2    // -2: not searched yet; -1: none left
	for i := k; i < end; {
		if nextLo != -1 && nextLo < i {
			if nextLo = bytes.IndexByte(b[i:end], lo); nextLo >= 0 {
				nextLo += i
			}
		}
		if lo == up {
			nextUp = nextLo
		} else if nextUp != -1 && nextUp < i {
			if nextUp = bytes.IndexByte(b[i:end], up); nextUp >= 0 {
				nextUp += i
			}
		}
		j := nextLo
		if j < 0 || (nextUp >= 0 && nextUp < j) {
			j = nextUp
		}
		if j < 0 {
			return -1
		}
		if at := j - k; asciiEqualFold(b[at:at+n], sub) {
			return at
		}
		i = j + 1
	}
	return -1
}

// foldAnchor is the index of sub's byte least frequent in English and JSON
// text (a non-letter first: '_' of _meta).
func foldAnchor(sub []byte) int {
	best, rank := 0, -1
	for i, c := range sub {
		if r := int(rarity[c]); r > rank {
			best, rank = i, r
		}
	}
	return best
}

// rarity[c] ranks byte c for foldAnchor, a letter in either case by its place in common
// (once for every byte: Scrub looks for its keys in every client line).
var rarity = func() (t [256]uint8) {
	const common = "etaoinsrhldcumfpgwybvkxjqz" // most frequent first
	for c := range t {
		t[c] = uint8(len(common) + 1) // not a letter: rarest
		if l := asciiLower(byte(c)); l >= 'a' && l <= 'z' {
			t[c] = uint8(strings.IndexByte(common, l))
		}
	}
	return t
}()

func asciiLower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func asciiUpper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// asciiEqualFold is bytes.EqualFold(w, sub) for an ASCII sub of w's length.
func asciiEqualFold(w, sub []byte) bool {
	for i, c := range w {
		if c >= 0x80 || asciiLower(c) != asciiLower(sub[i]) {
			return false
		}
	}
	return true
}

// cutUnparsed cuts line where the key could start: after a plain
// mcpServers, or at the first \u escape when that comes first.
func cutUnparsed(line []byte) []byte {
	i := len(line)
	if j := indexFold(line, keyMcpServers); j >= 0 {
		i = j + len(keyMcpServers)
	}
	if j := bytes.Index(line, unicodeEscape); j >= 0 && j < i {
		i = j
	}
	return append(line[:i:i], scrubbedCut...)
}

// scrubServers scrubs an array of servers (or an object of named servers).
func scrubServers(raw json.RawMessage) (json.RawMessage, bool) {
	if elems, err := arrayElems(raw); err == nil {
		for i := range elems {
			elems[i] = scrubServer(elems[i])
		}
		return encodeArray(elems), len(elems) > 0
	}
	ms, err := objectMembers(raw)
	if err != nil {
		return scrubValue(raw), !isNull(raw)
	}
	for i := range ms {
		ms[i].val = scrubServer(ms[i].val)
	}
	return encodeObject(ms), len(ms) > 0
}

func scrubServer(raw json.RawMessage) json.RawMessage {
	ms, err := objectMembers(raw)
	if err != nil {
		return scrubValue(raw)
	}
	for i := range ms {
		switch ms[i].key {
		case "env", "headers":
			ms[i].val = scrubPairs(ms[i].val)
		case "args":
			ms[i].val = scrubEach(ms[i].val)
		case "url", "command":
			ms[i].val = redactString(ms[i].val)
		}
	}
	return encodeObject(ms)
}

// scrubPairs keeps each {name, value} pair's name and scrubs every other
// member; a map form ({"NAME": "value"}) keeps its keys.
func scrubPairs(raw json.RawMessage) json.RawMessage {
	if elems, err := arrayElems(raw); err == nil {
		for i, el := range elems {
			ms, err := objectMembers(el)
			if err != nil {
				elems[i] = scrubValue(el)
				continue
			}
			for j := range ms {
				if ms[j].key != "name" {
					ms[j].val = scrubValue(ms[j].val)
				}
			}
			elems[i] = encodeObject(ms)
		}
		return encodeArray(elems)
	}
	return scrubEach(raw)
}

// scrubEach scrubs every element of an array or every value of an object.
func scrubEach(raw json.RawMessage) json.RawMessage {
	if elems, err := arrayElems(raw); err == nil {
		for i := range elems {
			elems[i] = scrubValue(elems[i])
		}
		return encodeArray(elems)
	}
	if ms, err := objectMembers(raw); err == nil {
		for i := range ms {
			ms[i].val = scrubValue(ms[i].val)
		}
		return encodeObject(ms)
	}
	return scrubValue(raw)
}

// scrubValue replaces any value but null with "[scrubbed]".
func scrubValue(raw json.RawMessage) json.RawMessage {
	if isNull(raw) {
		return raw
	}
	return scrubbedJSON
}

func isNull(raw []byte) bool { return bytes.Equal(bytes.TrimSpace(raw), jsonNull) }
