package acpschema

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/acptap/acptap/internal/jsonscan"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The tape form of the check (fval.go) must answer what the decoded form
// answers. These tests compare them on the fixtures, the tricky frames and
// fuzzed frames (checkBoth calls crossCheckTape).

// tapeDecoded decodes the entry e of t through fval's accessors only.
func tapeDecoded(t testing.TB, x fval) any {
	switch x.typ() {
	case tObject:
		m := map[string]any{}
		for _, e := range x.t.Entries(x.e) {
			k := string(x.t.Key(e))
			v, ok := x.member(k)
			if !ok {
				t.Fatalf("member %q not found", k)
			}
			m[k] = tapeDecoded(t, v)
		}
		return m
	case tArray:
		a := make([]any, 0)
		for i := range x.items() {
			a = append(a, tapeDecoded(t, x.item(i)))
		}
		return a
	}
	v, ok := x.scalar()
	if !ok {
		t.Fatalf("scalar of %s failed", x.raw())
	}
	return v
}

// tapePairs lists a line's values as the checker reads them: the message,
// its params, result and params.update, each in both forms.
func tapePairs(tp *jsonscan.Tape, inst any) (tapes []fval, decs []any) {
	root := fval{t: tp, e: tp.Root()}
	add := func(x fval, v any) { tapes, decs = append(tapes, x), append(decs, v) }
	add(root, inst)
	if arr, ok := inst.([]any); ok {
		for i, e := range arr {
			add(root.item(i), e)
		}
		return
	}
	m, ok := inst.(map[string]any)
	if !ok {
		return
	}
	for _, k := range []string{"params", "result"} {
		if x, ok := root.member(k); ok {
			add(x, m[k])
			if u, ok := x.member("update"); ok {
				add(u, m[k].(map[string]any)["update"])
			}
		}
	}
	return
}

// crossCheckTape fails unless the tape of b decodes as encoding/json
// decodes b and, for every root schema, the fast check on the tape answers
// as on the decoded value (or unsure). It reports whether the tape took b.
func crossCheckTape(t testing.TB, cs *compiledSchema, rs []*jsonschema.Schema, b []byte, st *stats) bool {
	t.Helper()
	var tp jsonscan.Tape
	if !tp.Parse(b) {
		return false
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the tape takes %q, encoding/json: %v", b, err)
	}
	if got := tapeDecoded(t, fval{t: &tp, e: tp.Root()}); !reflect.DeepEqual(got, inst) {
		t.Fatalf("tape of %q decodes to %#v, encoding/json %#v", b, got, inst)
	}
	var fc fastCheck
	tapes, decs := tapePairs(&tp, inst)
	for i := range tapes {
		if a, b := tapes[i].idKey(), (fval{v: decs[i]}).idKey(); a != b {
			t.Fatalf("idKey %s: tape %s, decoded %s", tapes[i].raw(), a, b)
		}
		for _, s := range rs {
			n := cs.fast[s]
			rt := fc.validTape(n, tapes[i].t, tapes[i].e)
			rm := fc.valid(n, decs[i])
			if rt != unsure && rt != rm {
				t.Fatalf("%s on %s: tape %v, decoded %v", s.Location, tapes[i].raw(), rt, rm)
			}
			sameCompiled(t, cs.comp.node(s), s, tapes[i], decs[i], rm)
			switch {
			case rt == unsure && rm != unsure:
				st.unsure++
			case rt == yes:
				st.yes++
			case rt == no:
				st.no++
			}
		}
	}
	return true
}

// TestTapeSameAsDecoded: on the tricky frames the tape form answers as
// the decoded form (TestFastCrossCheckFixtures checks it on the fixtures).
func TestTapeSameAsDecoded(t *testing.T) {
	for _, v := range []Version{V1, V2} {
		cs, err := loadSchema(v)
		if err != nil {
			t.Fatal(err)
		}
		rs := roots(cs)
		var st stats
		for _, l := range tricky {
			crossCheckTape(t, cs, rs, []byte(l), &st)
		}
		if st.yes == 0 || st.no == 0 {
			t.Errorf("v%d: the tape form answered too little: %+v", v, st)
		}
	}
}

// TestTapeConformingWorkloadIsFast: the benchmarks' session/update frames
// are found valid on the tape, with no decoding.
func TestTapeConformingWorkloadIsFast(t *testing.T) {
	cs, err := loadSchema(V2)
	if err != nil {
		t.Fatal(err)
	}
	var fc fastCheck
	var tp jsonscan.Tape
	n := 0
	for _, f := range corpus(t) {
		if !strings.HasSuffix(f.src, "acpgen.frames") && !strings.HasSuffix(f.src, "synthetic.frames") {
			continue
		}
		if !tp.Parse(f.line) {
			t.Fatalf("the tape refuses %s", f.line)
		}
		root := fval{t: &tp, e: tp.Root()}
		if m, _ := root.str("method"); m != "session/update" {
			continue
		}
		p, _ := root.member("params")
		u, _ := p.member("update")
		kind, _ := u.str("sessionUpdate")
		if r := fc.validTape(cs.fast[cs.updates[kind]], p.t, p.e); r != yes {
			t.Errorf("tape check = %v for %s", r, f.line)
		}
		if r := cs.comp.node(cs.updates[kind]).check(p.t, p.e); r != yes {
			t.Errorf("compiled check = %v for %s", r, f.line)
		}
		if r := cs.comp.node(cs.envelope[Agent]).check(root.t, root.e); r != yes {
			t.Errorf("compiled envelope check = %v for %s", r, f.line)
		}
		n++
	}
	if n < 200 {
		t.Errorf("only %d session/update frames in the workloads", n)
	}
}

// sameCompiled fails unless the compiled validator c of s, on the tape
// value x (decoded: dec), answers as jsonschema does when it answers, and
// as the interpreter (interp, its answer on dec) when both answer.
func sameCompiled(t testing.TB, c *cnode, s *jsonschema.Schema, x fval, dec any, interp tri) tri {
	t.Helper()
	r := c.check(x.t, x.e)
	if r != unsure && interp != unsure && r != interp {
		t.Fatalf("%s on %s: compiled %v, interpreter %v", s.Location, x.raw(), r, interp)
	}
	if r != unsure {
		err := s.Validate(dec)
		if (r == yes) != (err == nil) {
			t.Fatalf("%s on %s: compiled %v, jsonschema %v", s.Location, x.raw(), r, err)
		}
	}
	return r
}

// TestIsPlainSameAsIsText: isPlain and isKey answer what isText answers,
// for every string whose bytes are, or escape, or are near a plain key
// (the checker's "2.0", last method and last update kind), and for values
// that are not strings.
func TestIsPlainSameAsIsText(t *testing.T) {
	keys := []string{"2.0", "session/update", "agent_message_chunk", "", "é"}
	values := []string{`"2.0"`, `"2\u002e0"`, `"2.00"`, `"2.1"`, `"2."`, `20`, `null`, `{"a":1}`,
		`"session/update"`, `"session\/update"`, `"session/updatE"`, `"agent_message_chunk"`,
		`"agent_message_chun\u006b"`, `""`, `"\u0000"`, `"é"`, `"\u00e9"`, "\"\xc3\"", "\"2.0\xff\""}
	var tp jsonscan.Tape
	for _, k := range keys {
		if !plainKey(k) {
			t.Fatalf("plainKey(%q) = false", k)
		}
		for _, v := range values {
			line := `{"v":` + v + `}`
			if !tp.Parse([]byte(line)) {
				t.Fatalf("tape refused %s", line)
			}
			x, _ := fval{t: &tp, e: tp.Root()}.member("v")
			want := x.isText(k)
			if got := x.isPlain(k); got != want {
				t.Errorf("isPlain(%q) of %s = %v, isText %v", k, v, got, want)
			}
			if got := x.isKey(k, true); got != want {
				t.Errorf("isKey(%q, true) of %s = %v, isText %v", k, v, got, want)
			}
		}
	}
	if plainKey(`a\b`) || plainKey("a\"") || plainKey("\xff") {
		t.Error("plainKey takes a string whose JSON body is not its bytes")
	}
}
