package jsonscan

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

var tapeCases = []string{`{}`, `[]`, `1`, `-0.5e-3`, `"x"`, `true`, `null`, ` {"a" : [1, {"b":"]}"}] , "c":null} `,
	`{"a":1,"a":2}`, `{"\u0061":1}`, `{"a":"\u12"}`, `{"a":"\ud800"}`, "{\"a\":\"\xff\"}", "{\"\xff\":1}", `[1,]`, `{"a"}`,
	"{\"a\":\"\xc3\xa9\",\"b\":\"long enough to be read eight at a time \xe2\x80\"}", "[\"abcdefgh\xffabcdefgh\"]", "[\"\xf0\x9f\x98\x80\\n\xc3\"]",
	`01`, `1.`, `-`, `[1 2]`, `{"a":1}x`, "\"a\tb\"", `{"a":{"b":{"c":[[],[{}]]}}}`, `{"a":tru}`, `"\/\b\f\n\r\t\\\""`,
	// A long ASCII prefix, then what needs a look (object's skipASCII, then scanString from there).
	"{\"abcdefghijklmnopq\xff\":1}", "{\"abcdefghijklmnopqrs\\n\":1}", `{"a":"abcdefghijklmnopqrstuvwx\q"}`,
	"{\"abcdefghijklmnopqrstu\":\"abcdefghijklmnopqrstuvwxyz\xc3\"}", `{"abcdefghijklmnopqrstuvwx":"abcdefghijklmnopq`}

// plainThenSpecial are objects with such names and string values, all of which Parse takes.
var plainThenSpecial = []string{"{\"abcdefghijklmnopqrs\xc3\xa9\":\"abcdefghijklmnopqrstuvwxyz\\n\\u00e9\xe2\x82\xac\"}",
	"{\"abcdefgh\":\"abcdefghijklmnop\xff\",\"abcdefghijklmnopqrstuvw\":\"abcdefghijklmnopqrstuvwxyz\"}"}

// checkTape fails unless Parse takes only what encoding/json accepts, and
// its spans are the values encoding/json finds.
func checkTape(t *testing.T, b []byte) {
	var tp Tape
	if !tp.Parse(b) {
		return
	}
	if !json.Valid(b) {
		t.Fatalf("Parse takes %q, encoding/json does not", b)
	}
	if tp.ValidUTF8() != utf8.Valid(b) {
		t.Fatalf("%q: ValidUTF8 %v, utf8.Valid %v", b, tp.ValidUTF8(), utf8.Valid(b))
	}
	if nl := bytes.IndexByte(b, '\n') >= 0; tp.Newline() != nl {
		t.Fatalf("%q: Newline %v, a newline in the text %v", b, tp.Newline(), nl)
	}
	var walk func(e Ent)
	walk = func(e Ent) {
		raw := tp.Bytes(e)
		if !json.Valid(raw) {
			t.Fatalf("%q: entry %q is not a value", b, raw)
		}
		switch raw[0] {
		case '{':
			var m map[string]json.RawMessage
			if json.Unmarshal(raw, &m) != nil || len(m) != len(tp.Entries(e)) {
				t.Fatalf("%q: object %q has %d entries, encoding/json %d", b, raw, len(tp.Entries(e)), len(m))
			}
			for _, c := range tp.Entries(e) {
				if w, ok := m[string(tp.Key(c))]; !ok || !bytes.Equal(bytes.TrimSpace(w), tp.Bytes(c)) {
					t.Fatalf("%q: member %q = %q, encoding/json %q", b, tp.Key(c), tp.Bytes(c), w)
				}
				walk(c)
			}
		case '[':
			var a []json.RawMessage
			if json.Unmarshal(raw, &a) != nil || len(a) != len(tp.Entries(e)) {
				t.Fatalf("%q: array %q has %d entries, encoding/json %d", b, raw, len(tp.Entries(e)), len(a))
			}
			for i, c := range tp.Entries(e) {
				if !bytes.Equal(bytes.TrimSpace(a[i]), tp.Bytes(c)) {
					t.Fatalf("%q: item %d = %q, encoding/json %q", b, i, tp.Bytes(c), a[i])
				}
				walk(c)
			}
		default:
			if e.C >= 0 {
				t.Fatalf("%q: scalar %q with a container", b, raw)
			}
		}
	}
	walk(tp.Root())
}

// checkCompact fails unless Compact(b) is exactly "valid, and
// json.Compact leaves it as is".
func checkCompact(t *testing.T, b []byte) {
	var c bytes.Buffer
	want := json.Compact(&c, b) == nil && bytes.Equal(c.Bytes(), b)
	if got := Compact(b); got != want {
		t.Fatalf("Compact(%q) = %v, encoding/json says %v", b, got, want)
	}
}

func TestTapeAndCompact(t *testing.T) {
	for _, s := range append(append(tapeCases, plainThenSpecial...), cases...) {
		checkTape(t, []byte(s))
		checkCompact(t, []byte(s))
	}
	var tp Tape
	for _, s := range append([]string{`{"a":1}`, `[{"x":[1,2]},{"y":{}}]`, ` {"jsonrpc":"2.0","method":"m","params":{"sessionId":"s"}} `}, plainThenSpecial...) {
		if !tp.Parse([]byte(s)) {
			t.Errorf("Parse refuses %s", s)
		}
	}
}

// checkAppendString fails unless AppendString appends what String decodes.
func checkAppendString(t *testing.T, raw []byte) {
	want, wok := String(raw)
	got, ok := AppendString([]byte("pre"), raw)
	if ok != wok || (ok && string(got) != "pre"+want) {
		t.Fatalf("AppendString(%q) = %q %v, String %q %v", raw, got, ok, want, wok)
	}
}

func TestAppendString(t *testing.T) {
	for _, s := range []string{`""`, `"abc"`, `"a\nb\u00e9\ud83d\ude00"`, "\"\xff\"", `"\ud800x"`, `"x`, `"\q"`, ` "s" `, `1`} {
		checkAppendString(t, []byte(s))
	}
}

// FuzzTape: Parse and Compact agree with encoding/json on any input.
//
//	go test ./internal/jsonscan -run '^$' -fuzz FuzzTape -fuzztime 2m
func FuzzTape(f *testing.F) {
	for _, s := range append(append(tapeCases, plainThenSpecial...), cases...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkTape(t, b)
		checkCompact(t, b)
		checkAppendString(t, b)
		checkEscapeMask(t, b)
	})
}

// checkEscapeMask fails unless EscapeMask, on every word of b, is 0 exactly
// when none of its bytes is '"', '\\', below 0x20 or 0x80 and up, and its
// lowest set bit is the first such byte's: the same as a byte-by-byte look.
func checkEscapeMask(t *testing.T, b []byte) {
	for i := 0; i+8 <= len(b); i++ {
		first := 8
		for k, c := range b[i : i+8] {
			if c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
				first = k
				break
			}
		}
		m := EscapeMask(binary.LittleEndian.Uint64(b[i:]))
		if got := bits.TrailingZeros64(m) >> 3; got != first || m&^0x8080808080808080 != 0 {
			t.Fatalf("EscapeMask(%q) = %#x: first special byte %d, want %d", b[i:i+8], m, got, first)
		}
	}
}

func TestEscapeMask(t *testing.T) {
	// The bytes at the edges of each test, and any other.
	edges := []byte{0, 1, 0x1f, 0x20, 0x21, '"', 0x23, 0x5b, '\\', 0x5d, 0x7e, 0x7f, 0x80, 0x81, 0x9f, 0xa0, 0xa2, 0xdc, 0xfe, 0xff}
	r := rand.New(rand.NewPCG(1, 2))
	w := make([]byte, 8)
	for n := 0; n < 1<<20; n++ {
		for k := range w {
			if r.IntN(3) == 0 {
				w[k] = edges[r.IntN(len(edges))]
			} else {
				w[k] = byte(0x20 + r.IntN(0x5f)) // plain ASCII
			}
		}
		checkEscapeMask(t, w)
	}
	for c := 0; c < 256; c++ {
		for k := range 8 {
			copy(w, "abcdefgh")
			w[k] = byte(c)
			checkEscapeMask(t, w)
		}
	}
}

// TestTapeDuplicate: Parse refuses an object exactly when two of its
// members share a name (names that often share a length, a first and a
// last byte; objects on both sides of duplicate's 16 members).
func TestTapeDuplicate(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var tp Tape
	for n := 0; n < 20000; n++ {
		var names []string
		b := []byte(`{`)
		for k := range r.IntN(20) {
			name := []byte("ab"[:r.IntN(3)])
			for range r.IntN(3) {
				name = append(name, "xyz"[r.IntN(3)])
			}
			if k > 0 {
				b = append(b, ',')
			}
			b = append(append(append(b, '"'), name...), `":[]`...)
			names = append(names, string(name))
		}
		b = append(b, '}')
		dup := false
		for i := range names {
			for j := range i {
				dup = dup || names[i] == names[j]
			}
		}
		if tp.Parse(b) == dup {
			t.Fatalf("Parse(%s) = %v, duplicate names: %v", b, !dup, dup)
		}
		checkTape(t, b)
	}
}

// BenchmarkTapeParse parses the frames of the benchmarks' workload
// (internal/acpschema/testdata/acpgen.frames).
//
//	go test ./internal/jsonscan -run '^$' -bench TapeParse
func BenchmarkTapeParse(b *testing.B) {
	raw, err := os.ReadFile("../acpschema/testdata/acpgen.frames")
	if err != nil {
		b.Fatal(err)
	}
	var lines [][]byte
	n := 0
	for _, l := range bytes.Split(raw, []byte("\n")) {
		if len(l) > 4 && l[0] != '#' {
			lines = append(lines, l[4:])
			n += len(l) - 4
		}
	}
	b.SetBytes(int64(n))
	var t Tape
	for b.Loop() {
		for _, l := range lines {
			if !t.Parse(l) {
				b.Fatalf("%s", l)
			}
		}
	}
	b.ReportMetric(float64(len(lines))*float64(b.N)/b.Elapsed().Seconds(), "frames/s")
}

// TestTapeNewline: Newline is whether the text holds a '\n', wherever the
// space holding it lies (before, inside, after the value; beside \r, \t).
func TestTapeNewline(t *testing.T) {
	for _, s := range []string{"{\"a\":1}", "\n{\"a\":1}", "{\"a\":1}\n", "{\"a\":1}\r\n", "{\"a\":1}\r", "{\n\"a\":1}",
		"{\"a\"\n:1}", "{\"a\":\n1}", "{\"a\":1\n}", "{\"a\":1 ,\t\n\"b\":2}", "[1,\n2]", "[\n]", "{\r\t }", "\"x\"\n", " 1 "} {
		checkTape(t, []byte(s))
	}
}

// sameTape fails unless got is the tape want is (the same text parsed).
func sameTape(t *testing.T, name string, got, want *Tape) {
	t.Helper()
	if !slices.Equal(got.Ents, want.Ents) || !slices.Equal(got.Conts, want.Conts) || got.Root() != want.Root() ||
		got.ValidUTF8() != want.ValidUTF8() || got.Newline() != want.Newline() {
		t.Fatalf("%s: ParseWith's tape %+v %+v root %+v utf8 %v newline %v, Parse's %+v %+v root %+v utf8 %v newline %v", name,
			got.Ents, got.Conts, got.Root(), got.ValidUTF8(), got.Newline(), want.Ents, want.Conts, want.Root(), want.ValidUTF8(), want.Newline())
	}
}

// stringsInOrder are tp's string entries in the order they appear in its text.
func stringsInOrder(tp *Tape) []Ent {
	var es []Ent
	for _, e := range tp.Ents {
		if e.C < 0 && tp.B[e.V0] == '"' {
			es = append(es, e)
		}
	}
	if r := tp.Root(); r.C < 0 && len(tp.B) > 0 && tp.B[r.V0] == '"' {
		es = append(es, r) // the root is no entry of a container: not taken
	}
	slices.SortFunc(es, func(a, b Ent) int { return int(a.V0 - b.V0) })
	return es
}

// TestParseWith: a text that copies another's strings gets Parse's tape
// from ParseWith, whatever it is told is copied, and the strings it is
// told of in order are taken without a scan.
func TestParseWith(t *testing.T) {
	check := func(name string, b []byte, src *Tape, known []Ent, wantTaken int) {
		t.Helper()
		var want, got Tape
		wantOK := want.Parse(b)
		ok, taken := got.ParseWith(b, src, known)
		if ok != wantOK {
			t.Fatalf("%s: ParseWith %v, Parse %v", name, ok, wantOK)
		}
		if ok {
			sameTape(t, name, &got, &want)
		}
		if taken != wantTaken {
			t.Fatalf("%s: %d of %d taken, want %d", name, taken, len(known), wantTaken)
		}
	}
	// Every case as its own copy: the root string aside, all its strings are taken.
	for _, c := range append(append([]string{}, tapeCases...), plainThenSpecial...) {
		var src Tape
		if !src.Parse([]byte(c)) || !src.ValidUTF8() {
			continue
		}
		known := stringsInOrder(&src)
		n := len(known)
		if r := src.Root(); r.C < 0 {
			known, n = nil, 0 // the root is not an entry: refused
		}
		check(c, []byte(c), &src, known, n)
	}
	// A rewrite: the copies in another order, at other places, other depths.
	var src Tape
	srcText := []byte(`{"a":"x\ny","b":["p\"q",1],"c":"` + strings.Repeat(`line\n\t\"quoted\" é `, 40) + `","d":{"e":"plain"}}`)
	if !src.Parse(srcText) {
		t.Fatal("the source does not parse")
	}
	a, _ := src.Member(src.Root(), "a")
	c, _ := src.Member(src.Root(), "c")
	bArr, _ := src.Member(src.Root(), "b")
	pq := src.Entries(bArr)[0]
	d, _ := src.Member(src.Root(), "d")
	e, _ := src.Member(d, "e")
	rewrite := func(parts ...Ent) []byte {
		out := []byte(`{"z":[`)
		for i, p := range parts {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, `{"k":`...)
			out = append(out, src.Bytes(p)...)
			out = append(out, '}')
		}
		return append(out, `],"y":"not copied","x":[[`+string(src.Bytes(a))+`]]}`...)
	}
	b := rewrite(c, pq, e)
	check("in order", b, &src, []Ent{c, pq, e, a}, 4)
	check("a prefix", b, &src, []Ent{c, pq}, 2)
	check("out of order", b, &src, []Ent{pq, c, e, a}, 1) // c is not met after pq's copy: e and a wait behind it
	check("none", b, &src, nil, 0)
	check("a container", b, &src, []Ent{c, bArr}, 0)
	check("not an entry", b, &src, []Ent{c, {V0: a.V0, V1: a.V0 + 3, C: -1}}, 0)
	check("out of range", b, &src, []Ent{c, {V0: 1, V1: int32(len(srcText) + 9), C: -1}}, 0)
	var self Tape
	self.Parse(srcText)
	sa, _ := self.Member(self.Root(), "a")
	if ok, taken := self.ParseWith(srcText, &self, []Ent{sa}); !ok || taken != 0 {
		t.Fatalf("the tape itself as its source: %v, %d taken", ok, taken)
	}
	// A copy followed by what Parse refuses, and one cut short.
	check("then junk", append(rewrite(c)[:len(rewrite(c))-1], ','), &src, []Ent{c, a}, 2)
	cut := rewrite(c)
	check("cut", cut[:len(`{"z":[{"k":`)+len(src.Bytes(c))-2], &src, []Ent{c}, 0)
	// A source with invalid UTF-8: its strings are scanned (the copy's need the look).
	var bad Tape
	badText := []byte("{\"a\":\"\xff\",\"b\":\"ok\"}")
	if !bad.Parse(badText) || bad.ValidUTF8() {
		t.Fatal("the invalid source")
	}
	check("invalid UTF-8", badText, &bad, stringsInOrder(&bad), 0)
}
