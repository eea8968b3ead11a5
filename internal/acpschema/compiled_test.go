package acpschema

import (
	"bytes"
	"encoding/json"
	"sort"
	"testing"

	"github.com/acptap/acptap/internal/jsonscan"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The compiled validator (compiled.go) against jsonschema and the
// interpreter, on every value of a frame's tape (not only the message and
// its params) and every compiled schema of a version (not only the roots:
// each definition, property and branch the roots reach).

// allSchemas lists every schema of cs the fast check modelled, by location.
func allSchemas(cs *compiledSchema) []*jsonschema.Schema {
	out := make([]*jsonschema.Schema, 0, len(cs.fast))
	for s := range cs.fast {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Location < out[j].Location })
	return out
}

// tapeValues lists every value of tp with its decoded form.
func tapeValues(t testing.TB, tp *jsonscan.Tape) (xs []fval, decs []any) {
	var walk func(e jsonscan.Ent)
	walk = func(e jsonscan.Ent) {
		x := fval{t: tp, e: e}
		xs, decs = append(xs, x), append(decs, tapeDecoded(t, x))
		for _, c := range tp.Entries(e) {
			walk(c)
		}
	}
	walk(tp.Root())
	return
}

// crossCheckCompiled applies the schemas ss to every value of b's tape.
func crossCheckCompiled(t testing.TB, cs *compiledSchema, ss []*jsonschema.Schema, b []byte, st *stats) {
	t.Helper()
	var tp jsonscan.Tape
	if !tp.Parse(b) {
		return
	}
	var fc fastCheck
	xs, decs := tapeValues(t, &tp)
	for i, x := range xs {
		for _, s := range ss {
			rm := fc.valid(cs.fast[s], decs[i])
			switch sameCompiled(t, cs.comp.node(s), s, x, decs[i], rm) {
			case yes:
				st.yes++
			case no:
				st.no++
			default:
				st.unsure++
			}
		}
	}
}

// TestCompiledFixtures: on every value of a sample of the fixture frames,
// every compiled schema of v1 and v2 answers as jsonschema does.
func TestCompiledFixtures(t *testing.T) {
	frames := corpus(t)
	step := 20
	if testing.Short() {
		step = 60
	}
	for _, v := range allVersions {
		cs, err := loadSchema(v)
		if err != nil {
			t.Fatal(err)
		}
		ss := allSchemas(cs)
		var st stats
		for i := 0; i < len(frames); i += step {
			// A window of the schemas per frame, so that every schema meets values.
			w := 96
			lo := (i * 31) % len(ss)
			win := ss[lo:min(lo+w, len(ss))]
			crossCheckCompiled(t, cs, win, frames[i].line, &st)
		}
		for i, l := range tricky {
			lo := (i * 131) % len(ss)
			crossCheckCompiled(t, cs, ss[lo:min(lo+256, len(ss))], []byte(l), &st)
		}
		if st.yes == 0 || st.no == 0 {
			t.Errorf("v%d: compiled answered too little: %+v", v, st)
		}
		t.Logf("v%d: %d schemas, %+v", v, len(ss), st)
	}
}

// TestCompiledUnsureOnCycles: a schema applied in place through a cycle
// compiles to unsure (jsonschema reports the cycle), and the checker still
// agrees with jsonschema.
func TestCompiledUnsureOnCycles(t *testing.T) {
	for _, src := range []string{
		`{"$defs":{"a":{"allOf":[{"$ref":"#/$defs/b"}]},"b":{"anyOf":[{"$ref":"#/$defs/a"}]}},"$ref":"#/$defs/a"}`,
		`{"$defs":{"a":{"not":{"$ref":"#/$defs/a"}}},"$ref":"#/$defs/a"}`,
		`{"type":"object","properties":{"x":{"$ref":"#"}}}`,
	} {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(src)))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource("https://x.invalid/s.json", doc); err != nil {
			t.Fatal(err)
		}
		s, err := c.Compile("https://x.invalid/s.json")
		if err != nil {
			t.Fatal(err)
		}
		fs := fastSchemas{}
		fs.node(s)
		fs.finish()
		comp := &lazyComp{fs: fs}
		for _, v := range []string{`{}`, `{"x":{"x":{}}}`, `{"x":1}`, `1`} {
			var tp jsonscan.Tape
			if !tp.Parse([]byte(v)) {
				t.Fatal(v)
			}
			dec, _ := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(v)))
			r := comp.node(s).check(&tp, tp.Root())
			err := s.Validate(dec)
			if r != unsure && (r == yes) != (err == nil) {
				t.Errorf("%s on %s: compiled %v, jsonschema %v", src, v, r, err)
			}
		}
	}
}

// FuzzCompiled: a mutated fixture frame (as FuzzMutate makes them), every
// value of its tape against a window of the compiled schemas (sel picks
// it): the compiled validator answers as jsonschema and the interpreter.
//
//	go test ./internal/acpschema -run '^$' -fuzz FuzzCompiled -fuzztime 10m
func FuzzCompiled(f *testing.F) {
	frames := corpus(f)
	for i := 0; i < len(frames); i += 8 {
		f.Add(uint16(i), uint16(i*13), []byte{byte(i), byte(i >> 3), 1, byte(i * 7), 2, 3})
	}
	cs, err := loadSchema(V2)
	if err != nil {
		f.Fatal(err)
	}
	ss := allSchemas(cs)
	f.Fuzz(func(t *testing.T, pick, sel uint16, ops []byte) {
		fr := frames[int(pick)%len(frames)]
		var v any
		d := json.NewDecoder(bytes.NewReader(fr.line))
		d.UseNumber()
		if d.Decode(&v) != nil {
			return
		}
		m := &mutator{ops: ops}
		for n := int(m.next() % 6); n > 0; n-- {
			v = m.mutate(v)
		}
		var buf bytes.Buffer
		m.write(&buf, v)
		lo := int(sel) % len(ss)
		var st stats
		crossCheckCompiled(t, cs, ss[lo:min(lo+48, len(ss))], buf.Bytes(), &st)
	})
}
