package jsonscan

import (
	"bytes"
	"unicode/utf8"
)

// Tape is the structure of one JSON value, parsed and validated in one
// strict pass without decoding anything: every object's members and every
// array's elements as spans of the text, so that a reader (the schema
// check, a mapper) walks the value without scanning it again. A Tape is
// reused from one value to the next (Parse keeps its buffers).
type Tape struct {
	// B is the text parsed; every span indexes it.
	B []byte
	// Ents are the members of objects and the elements of arrays; those of
	// one container are contiguous (Conts).
	Ents []Ent
	// Conts are the containers (objects and arrays) in the order their
	// opening bracket appears: Conts[0] is the root when it is one.
	Conts []Cont
	root  Ent
	// badUTF8: a string value holds invalid UTF-8 (names never do).
	badUTF8 bool
	// newline: the space around a token holds a '\n' (strings never do:
	// Parse refuses a control character in one).
	newline bool
	stk     []Ent
	keys    map[string]struct{}
}

// Ent is one value in a Tape: the member name (K0:K1, between its quotes;
// empty for array elements and the root), the value (V0:V1, without
// surrounding space) and, when the value is an object or an array, its
// container (C, an index in Conts; -1 for a scalar).
type Ent struct {
	K0, K1, V0, V1, C int32
}

// Cont is one object or array: its entries are Ents[First:First+N].
type Cont struct {
	First, N int32
}

// maxKept is the most entries a Tape keeps room for between values.
const maxKept = 1 << 14

// MaxTapeDepth bounds the nesting Parse follows.
const MaxTapeDepth = 500

// Parse parses b, one JSON value with only JSON whitespace around it. It
// reports true only for text encoding/json accepts, and it refuses
// (false) some that it accepts, for the caller to take another way: a
// member name with an escape or invalid UTF-8 (so that every name is its
// own text), a duplicate member name in an object, nesting deeper than
// MaxTapeDepth, text of 1 GiB or more. String values are checked as
// encoding/json checks them (escapes, control characters) and not decoded.
func (t *Tape) Parse(b []byte) bool {
	ok, _ := t.parse(b, nil, nil)
	return ok
}

// parse is Parse, taking the copies of known (ParseWith's, checked).
func (t *Tape) parse(b []byte, src *Tape, known []Ent) (bool, int) {
	t.Release() // the buffers a large value grew are not kept for the next one
	t.B, t.Ents, t.Conts, t.stk, t.badUTF8, t.newline = b, t.Ents[:0], t.Conts[:0], t.stk[:0], false, false
	if len(b) >= 1<<30 {
		return false, 0
	}
	p := tapeParser{t: t, b: b, known: known}
	if known != nil {
		p.src = src.B
	}
	i := p.space(0)
	e, i, ok := p.value(i, 0)
	if !ok || p.space(i) != len(b) {
		return false, p.taken
	}
	t.root = e
	return true, p.taken
}

// ParseWith is Parse of b, a text that copies string values of src, a
// tape Parse took (true) of other text: known are those values, src's
// string entries, in the order their copies appear among b's string
// values. A string value of b that is byte for byte the next of known is
// taken without scanning it again (src found it well formed, and its end
// is its first unescaped quote, so a scan would end there too); any other
// is scanned as Parse scans it. So the tape is Parse's whatever known
// holds; known is ignored when src is t, when src's text is not valid
// UTF-8 (a copy's bytes would need a look), or when one of them is not a
// string entry of src. taken is how many of known were taken.
func (t *Tape) ParseWith(b []byte, src *Tape, known []Ent) (ok bool, taken int) {
	if src == t || !src.ValidUTF8() || !src.stringEnts(known) {
		known = nil
	}
	return t.parse(b, src, known)
}

// stringEnts reports whether every one of es is a string value in t.Ents.
func (t *Tape) stringEnts(es []Ent) bool {
next:
	for _, e := range es {
		if e.C >= 0 || e.V0 < 0 || e.V1 > int32(len(t.B)) || e.V0 >= e.V1 || t.B[e.V0] != '"' {
			return false
		}
		for _, m := range t.Ents {
			if m.V0 == e.V0 && m.V1 == e.V1 {
				continue next
			}
		}
		return false
	}
	return true
}

// Release drops the text parsed (the tape no longer refers to it) and the
// buffers a large value grew.
func (t *Tape) Release() {
	t.B = nil
	if cap(t.Ents) > maxKept || cap(t.stk) > maxKept || cap(t.Conts) > maxKept {
		t.Ents, t.Conts, t.stk = nil, nil, nil
	}
}

// Newline reports whether the text parsed (Parse returned true) holds a
// '\n', as bytes.IndexByte(t.B, '\n') >= 0 does: outside its strings,
// which hold none, Parse looked at every byte of space.
func (t *Tape) Newline() bool { return t.newline }

// ValidUTF8 reports whether the text parsed (Parse returned true) is valid
// UTF-8, as utf8.Valid(t.B) does: outside its strings JSON text is ASCII,
// and Parse looked at every string's bytes.
func (t *Tape) ValidUTF8() bool { return !t.badUTF8 }

// Root is the value parsed.
func (t *Tape) Root() Ent { return t.root }

// Bytes is the text of e's value.
func (t *Tape) Bytes(e Ent) []byte { return t.B[e.V0:e.V1] }

// Key is the text of e's member name (no escapes: Parse refuses them).
func (t *Tape) Key(e Ent) []byte { return t.B[e.K0:e.K1] }

// Entries are the members or elements of the container e holds (nil for a scalar).
func (t *Tape) Entries(e Ent) []Ent {
	if e.C < 0 {
		return nil
	}
	c := t.Conts[e.C]
	return t.Ents[c.First : c.First+c.N]
}

// Member finds the member k of the object e holds.
func (t *Tape) Member(e Ent, k string) (Ent, bool) {
	if e.C < 0 || t.B[e.V0] != '{' {
		return Ent{}, false
	}
	for _, m := range t.Entries(e) {
		if string(t.B[m.K0:m.K1]) == k {
			return m, true
		}
	}
	return Ent{}, false
}

type tapeParser struct {
	t *Tape
	b []byte
	// src and known are ParseWith's; taken counts the values of known
	// taken so far, known[taken] the next one looked for.
	src   []byte
	known []Ent
	taken int
}

// copied returns the end of the string value at b[i] (a '"') when it is
// known[taken], byte for byte, and takes it.
func (p *tapeParser) copied(i int) (int, bool) {
	k := p.known[p.taken]
	s := p.src[k.V0:k.V1]
	if len(p.b)-i < len(s) || string(p.b[i:i+len(s)]) != string(s) {
		return i, false
	}
	p.taken++
	return i + len(s), true
}

// space is SkipSpace(p.b, i), noting a newline (Tape.Newline); most
// tokens have no space before them, and pay one comparison for it.
func (p *tapeParser) space(i int) int {
	if i < len(p.b) && p.b[i] <= ' ' {
		return p.spaceAfter(i)
	}
	return i
}

func (p *tapeParser) spaceAfter(i int) int {
	j := SkipSpace(p.b, i)
	if !p.t.newline && bytes.IndexByte(p.b[i:j], '\n') >= 0 {
		p.t.newline = true
	}
	return j
}

// value parses the value at b[i] (not space) and returns its entry (no
// key) and the index after it.
func (p *tapeParser) value(i, depth int) (Ent, int, bool) {
	b := p.b
	if i >= len(b) {
		return Ent{}, i, false
	}
	e := Ent{V0: int32(i), C: -1}
	var ok bool
	switch c := b[i]; {
	case c == '{' || c == '[':
		if depth >= MaxTapeDepth {
			return e, i, false
		}
		e.C = int32(len(p.t.Conts))
		p.t.Conts = append(p.t.Conts, Cont{})
		if c == '{' {
			i, ok = p.object(i, depth+1, e.C)
		} else {
			i, ok = p.array(i, depth+1, e.C)
		}
	case c == '"':
		if p.taken < len(p.known) {
			if i, ok = p.copied(i); ok {
				break
			}
		}
		var hi bool
		j := i
		if i, _, hi, ok = scanString(b, i); ok && hi && !utf8.Valid(b[j+1:i-1]) {
			p.t.badUTF8 = true
		}
	case c == '-' || (c >= '0' && c <= '9'):
		i, ok = scanNumber(b, i)
	case c == 't':
		i, ok = literal(b, i, "true")
	case c == 'f':
		i, ok = literal(b, i, "false")
	case c == 'n':
		i, ok = literal(b, i, "null")
	}
	e.V1 = int32(i)
	return e, i, ok
}

func literal(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

// close moves the entries a container pushed since mark to Ents.
func (p *tapeParser) close(idx int32, mark int) {
	t := p.t
	t.Conts[idx] = Cont{First: int32(len(t.Ents)), N: int32(len(t.stk) - mark)}
	t.Ents = append(t.Ents, t.stk[mark:]...)
	t.stk = t.stk[:mark]
}

func (p *tapeParser) object(i, depth int, idx int32) (int, bool) {
	b, t := p.b, p.t
	mark := len(t.stk)
	i = p.space(i + 1)
	if i < len(b) && b[i] == '}' {
		p.close(idx, mark)
		return i + 1, true
	}
	// A bit a name by its length and last byte (as duplicate compares
	// them first): only an object where two names share one is looked at
	// for a duplicate.
	var names uint64
	shared := false
	for {
		if i >= len(b) || b[i] != '"' {
			return i, false
		}
		k0 := i + 1
		// Most strings are plain ASCII up to their quote: skipASCII finds it
		// (scanString is not inlined), and scanString goes on from the first
		// byte that needs a look (its prefix is plain: no escape, ASCII).
		// utf8.Valid looks only from there too: an ASCII prefix is whole runes.
		end := skipASCII(b, k0)
		var esc, hi, ok bool
		if end < len(b) && b[end] == '"' {
			end++
		} else {
			k := end
			if end, esc, hi, ok = scanString(b, k-1); !ok || esc || (hi && !utf8.Valid(b[k:end-1])) {
				return i, false
			}
		}
		i = p.space(end)
		if i >= len(b) || b[i] != ':' {
			return i, false
		}
		i = p.space(i + 1)
		var e Ent
		if i < len(b) && b[i] == '"' {
			// A string value (most are), as value parses it, without the call;
			// a plain one as the name above; one ParseWith knows of, as it is.
			j := i
			took := false
			if p.taken < len(p.known) {
				i, took = p.copied(j)
			}
			if !took {
				if i = skipASCII(b, j+1); i < len(b) && b[i] == '"' {
					i++
				} else {
					k := i
					if i, _, hi, ok = scanString(b, k-1); !ok {
						return i, false
					}
					if hi && !utf8.Valid(b[k:i-1]) {
						t.badUTF8 = true
					}
				}
			}
			e = Ent{V0: int32(j), V1: int32(i), C: -1}
		} else if e, i, ok = p.value(i, depth); !ok {
			return i, false
		}
		e.K0, e.K1 = int32(k0), int32(end-1)
		bit := uint64(1) << ((uint(end-k0)*7 + uint(b[end-2])) & 63) // b[end-2]: the last byte, or an empty name's opening quote
		shared = shared || names&bit != 0
		names |= bit
		t.stk = append(t.stk, e)
		i = p.space(i)
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = p.space(i + 1)
		case '}':
			if shared && p.duplicate(mark) {
				return i, false
			}
			p.close(idx, mark)
			return i + 1, true
		default:
			return i, false
		}
	}
}

// duplicate reports whether two members pushed since mark share a name.
func (p *tapeParser) duplicate(mark int) bool {
	ms := p.t.stk[mark:]
	b := p.b
	if len(ms) <= 16 {
		for i := 1; i < len(ms); i++ {
			li, ci := ms[i].K1-ms[i].K0, b[ms[i].K1-1] // for an empty name, the quote before it (not compared)
			for j := 0; j < i; j++ {
				// The length and the last byte first: most names differ there.
				if ms[j].K1-ms[j].K0 != li || (li > 0 && b[ms[j].K1-1] != ci) {
					continue
				}
				if string(b[ms[j].K0:ms[j].K1]) == string(b[ms[i].K0:ms[i].K1]) {
					return true
				}
			}
		}
		return false
	}
	if p.t.keys == nil {
		p.t.keys = map[string]struct{}{}
	}
	clear(p.t.keys)
	for _, m := range ms {
		k := string(b[m.K0:m.K1])
		if _, dup := p.t.keys[k]; dup {
			return true
		}
		p.t.keys[k] = struct{}{}
	}
	return false
}

func (p *tapeParser) array(i, depth int, idx int32) (int, bool) {
	b, t := p.b, p.t
	mark := len(t.stk)
	i = p.space(i + 1)
	if i < len(b) && b[i] == ']' {
		p.close(idx, mark)
		return i + 1, true
	}
	for {
		e, j, ok := p.value(i, depth)
		if !ok {
			return j, false
		}
		t.stk = append(t.stk, e)
		i = p.space(j)
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = p.space(i + 1)
		case ']':
			p.close(idx, mark)
			return i + 1, true
		default:
			return i, false
		}
	}
}

// ScanString checks the JSON string that starts at b[i] (a '"') as
// encoding/json does (escapes, control characters; invalid UTF-8 is
// accepted, as encoding/json accepts it) and returns the index after it
// and whether it holds an escape.
func ScanString(b []byte, i int) (end int, escaped, ok bool) {
	end, escaped, _, ok = scanString(b, i)
	return end, escaped, ok
}

// scanString is ScanString; hi also tells whether the string holds a byte
// beyond ASCII (without one it is valid UTF-8). Until the first such byte
// the words are tested with EscapeMask (stopping at it), after it with
// specialMask (hi is known): cheaper than or'ing every word skipped.
func scanString(b []byte, i int) (end int, escaped, hi, ok bool) {
	for j := i + 1; j < len(b); j++ {
		if hi {
			j = skipPlain(b, j)
		} else {
			j = skipASCII(b, j)
		}
		if j >= len(b) {
			break
		}
		switch c := b[j]; {
		case c >= 0x80:
			hi = true
		case c == '\\':
			escaped = true
			if j+1 >= len(b) {
				return 0, escaped, hi, false
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j++
			case 'u':
				if getu4(b[j:]) < 0 {
					return 0, escaped, hi, false
				}
				j += 5
			default:
				return 0, escaped, hi, false
			}
		case c == '"':
			return j + 1, escaped, hi, true
		case c < 0x20:
			return 0, escaped, hi, false
		}
	}
	return 0, escaped, hi, false
}

// NumberEnd is scanNumber: the index after the JSON number at b[i].
func NumberEnd(b []byte, i int) (int, bool) { return scanNumber(b, i) }

// scanNumber checks the JSON number at b[i]
// (-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?) and returns the index
// after it.
func scanNumber(b []byte, i int) (int, bool) {
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
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return i, false
		}
	}
	return i, true
}

// Text decodes a JSON string value (with its quotes) known to be well
// formed (a Tape's) as encoding/json does; without an escape and in valid
// UTF-8 its bytes are its text.
func Text(raw []byte) (string, bool) {
	return Unquote(raw[1 : len(raw)-1])
}
