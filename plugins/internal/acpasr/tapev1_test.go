package acpasr

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/mappertest"
	"github.com/google/go-cmp/cmp"
)

// TestAdoptOnlyTheSameBytes: the check's tape of a wire frame becomes
// another frame's only when that frame's bytes are the wire's very bytes
// (same memory, same length) and the tape still holds the wire frame; an
// equal copy, a prefix, a shifted slice, a tape that moved on or was not
// taken, and a wire frame whose bytes were swapped after its check are
// parsed instead.
func TestAdoptOnlyTheSameBytes(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"plan","entries":[]}}}  `)
	fresh := func() (*frameTape, *sdk.Frame) {
		ft := &frameTape{}
		wire := &sdk.Frame{Kind: sdk.KindLine, Data: line}
		if !ft.parse(wire) {
			t.Fatal("the tape refused the line")
		}
		return ft, wire
	}
	refused := map[string]func(ft *frameTape, wire *sdk.Frame) (*sdk.Frame, *sdk.Frame){
		"an equal copy": func(_ *frameTape, wire *sdk.Frame) (*sdk.Frame, *sdk.Frame) {
			return &sdk.Frame{Kind: sdk.KindLine, Data: bytes.Clone(line)}, wire
		},
		"a prefix of the bytes": func(_ *frameTape, wire *sdk.Frame) (*sdk.Frame, *sdk.Frame) {
			return &sdk.Frame{Kind: sdk.KindLine, Data: line[:len(line)-2]}, wire
		},
		"a slice starting later": func(_ *frameTape, wire *sdk.Frame) (*sdk.Frame, *sdk.Frame) {
			return &sdk.Frame{Kind: sdk.KindLine, Data: line[1:]}, wire
		},
		"no wire frame": func(_ *frameTape, _ *sdk.Frame) (*sdk.Frame, *sdk.Frame) {
			return &sdk.Frame{Kind: sdk.KindLine, Data: line}, nil
		},
		"the tape moved on": func(ft *frameTape, wire *sdk.Frame) (*sdk.Frame, *sdk.Frame) {
			ft.parse(&sdk.Frame{Kind: sdk.KindLine, Data: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)})
			return &sdk.Frame{Kind: sdk.KindLine, Data: line}, wire
		},
		"the wire's bytes swapped after the check": func(_ *frameTape, wire *sdk.Frame) (*sdk.Frame, *sdk.Frame) {
			other := bytes.Clone(line)
			wire.Data = other
			return &sdk.Frame{Kind: sdk.KindLine, Data: other}, wire
		},
		"the wire frame itself": func(_ *frameTape, wire *sdk.Frame) (*sdk.Frame, *sdk.Frame) {
			return wire, wire
		},
	}
	for name, mk := range refused {
		ft, wire := fresh()
		f, w := mk(ft, wire)
		before, gen := ft.f, ft.gen
		if ft.adopt(f, w) {
			t.Errorf("%s: adopted", name)
		}
		if ft.f != before || ft.gen != gen {
			t.Errorf("%s: refused, but the tape changed", name)
		}
	}
	// A tape Parse refused is not adopted either.
	bad := []byte(`{"a":1,"a":2}`)
	ft := &frameTape{}
	wire := &sdk.Frame{Kind: sdk.KindLine, Data: bad}
	if ft.parse(wire) {
		t.Fatal("the tape took a duplicate name")
	}
	if ft.adopt(&sdk.Frame{Kind: sdk.KindLine, Data: bad}, wire) {
		t.Error("a refused tape: adopted")
	}

	// The wire's bytes, passed through: adopted, read as parsed, the
	// objects of before dead (a new gen).
	ft, wire = fresh()
	f := &sdk.Frame{Kind: sdk.KindLine, Seq: 9, Data: wire.Data}
	gen := ft.gen
	if !ft.adopt(f, wire) || !ft.holds(f, f.Data) || ft.gen != gen+1 {
		t.Fatalf("the same bytes: not adopted (holds %v, gen %d → %d)", ft.holds(f, f.Data), gen, ft.gen)
	}
	got, err := parseRPCTape(ft, f.Data)
	if err != nil {
		t.Fatal(err)
	}
	want, err := parseRPCChecked(f, f.Data, false)
	if err != nil {
		t.Fatal(err)
	}
	if gv, wv := msgView(got), msgView(want); !reflect.DeepEqual(gv, wv) {
		t.Fatalf("adopted tape:\n%v\nscanned:\n%v", gv, wv)
	}
	// Adopted once: the tape is f's now, not the wire frame's.
	if ft.adopt(&sdk.Frame{Kind: sdk.KindLine, Data: wire.Data}, wire) {
		t.Error("adopted a second time from a tape that moved on to a translated frame")
	}
}

// TestPassThroughSameAsCopy: a translator that passes wire frames through
// (MapChecked and MapPrepared with the wire's own bytes, whose check's tape
// the engine then reuses) writes exactly what it writes when it hands the
// engine a copy of the bytes (parsed again), also when the pass-through
// follows or precedes a frame of its own, with the schema check on and
// off, prepared (PrepareFrames, PrepareSources) and not, over the fixtures and the malformed corpus.
func TestPassThroughSameAsCopy(t *testing.T) {
	corpora := map[string][]sdk.Frame{
		"turn":      loadFrames(t, "turn"),
		"full":      loadFrames(t, "full"),
		"malformed": mappertest.Malformed(base),
	}
	own := func(f sdk.Frame) Translated { // a frame of the translator's, on the same seq
		f.Data = []byte(`{"jsonrpc":"2.0","method":"x/unknown","params":{}}`)
		return Translated{Frame: f}
	}
	lists := map[string]func(wire sdk.Frame, copied bool) []Translated{
		"alone": func(wire sdk.Frame, copied bool) []Translated {
			if copied {
				wire.Data = bytes.Clone(wire.Data)
			}
			return []Translated{{Frame: wire}}
		},
		"first of two": func(wire sdk.Frame, copied bool) []Translated {
			o := own(wire)
			if copied {
				wire.Data = bytes.Clone(wire.Data)
			}
			return []Translated{{Frame: wire}, o}
		},
		"after one of its own": func(wire sdk.Frame, copied bool) []Translated {
			o := own(wire)
			if copied {
				wire.Data = bytes.Clone(wire.Data)
			}
			return []Translated{o, {Frame: wire}}
		},
	}
	for name, frames := range corpora {
		for lname, list := range lists {
			for _, config := range []string{"", `{"checkSchema":false}`} {
				for _, prepared := range []string{"", "frames", "sources"} {
					run := func(copied bool) []sdk.Output {
						cfg, err := ParseConfig([]byte(config))
						if err != nil {
							t.Fatal(err)
						}
						s := NewSession(testOptions(cfg), startReq(config))
						var outs []sdk.Output
						for i := 0; i < len(frames); i += 5 {
							batch := frames[i:min(i+5, len(frames))]
							var p *Prepared
							switch prepared {
							case "frames":
								s.PrepareFrames(batch)()
							case "sources": // no copy of the bytes made ahead
								s.PrepareSources(batch)()
							}
							if prepared != "" {
								p = s.TakePrepared(batch)
							}
							for j := range batch {
								o, err := s.MapPrepared(context.Background(), p, j, batch[j], list(batch[j], copied))
								if err != nil {
									t.Fatal(err)
								}
								outs = append(outs, o...)
							}
							p.Done()
						}
						o, err := s.Finish(context.Background(), "eof")
						if err != nil {
							t.Fatal(err)
						}
						return append(outs, o...)
					}
					want, got := run(true), run(false)
					if reflect.DeepEqual(want, got) {
						continue
					}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Fatalf("%s, %s, config %q, prepared %q: outputs differ (-copy +pass-through):\n%s", name, lname, config, prepared, diff)
					}
				}
			}
		}
	}
}

// sameItems fails unless every array member of o, at any depth, reads the
// same items (obj.items) as split from its bytes (splitArray), and every
// item that is an object the same members (kv.asObj) as parsed.
func sameItems(t *testing.T, o obj, path string, depth int) int {
	t.Helper()
	n := 0
	for _, m := range o {
		p := path + "." + m.k
		if sub, st := o.object(m.k); st == valid && depth < 16 {
			n += sameItems(t, sub, p, depth+1)
		}
		got, gst := o.items(m.k)
		want, wst := o.array(m.k)
		if gst != wst || len(got) != len(want) {
			t.Fatalf("%s: items %v (%d), array %v (%d)", p, gst, len(got), wst, len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i].v, want[i]) || got[i].k != "" {
				t.Fatalf("%s[%d]: item %q %s, split %s", p, i, got[i].k, got[i].v, want[i])
			}
			g, gok := got[i].asObj()
			w, wok := parseObj(want[i])
			if gok != wok || !reflect.DeepEqual(objView(g, 0), objView(w, 0)) {
				t.Fatalf("%s[%d]: item read %v %v, parsed %v %v", p, i, gok, objView(g, 0), wok, objView(w, 0))
			}
			if gok && depth < 16 {
				n += sameItems(t, g, fmt.Sprintf("%s[%d]", p, i), depth+1)
			}
			n++
		}
	}
	return n
}

// TestItemsSameAsSplit: the arrays of every fixture frame (this package's,
// acpv1's v1 logs, acpv2's and the schema's) read the same items from the
// frame's tape as split from their bytes, items that are objects the same
// members, at any depth; and an obj kept past its frame (an earlier gen)
// splits its arrays again, reading the same.
func TestItemsSameAsSplit(t *testing.T) {
	var names []string
	for _, g := range []string{"testdata/*.frames", "../../acpv2/testdata/*.acp.golden", "../../../internal/acpschema/testdata/*.frames", "../../acpv1/testdata/*.jsonl", "../../acpv1/testdata/*/*"} {
		m, _ := filepath.Glob(g)
		names = append(names, m...)
	}
	extra := []string{`{"method":"m","params":{"a":[],"b":[1,"x",{"c":[{"d":[]}]},[{"e":1}],null],"f":{"g":[{"h":{"i":[2]}}]}}}`,
		`{"id":1,"result":{"content":[{"type":"diff","changes":[{"operation":"add","path":"/p","_meta":{"k":"v"}}]}]}}`}
	items := 0
	check := func(data []byte) { items += itemsOfFrame(t, data) }
	for _, name := range names {
		if st, err := os.Stat(name); err != nil || st.IsDir() {
			continue
		}
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if _, rest, ok := strings.Cut(l, " "); ok && (strings.HasPrefix(l, "c2a ") || strings.HasPrefix(l, "a2c ")) {
				l = rest
			}
			if strings.HasPrefix(l, "{") {
				check([]byte(l))
			}
		}
	}
	for _, l := range extra {
		check([]byte(l))
	}
	if items < 100 {
		t.Errorf("only %d items compared", items)
	}
}

// itemsOfFrame checks sameItems over the frame data (when the tape takes it
// and it is JSON-RPC), then again on its objects kept past the frame (an
// earlier gen, split again) once the next frame is mapped; it returns how
// many items it compared.
func itemsOfFrame(t *testing.T, data []byte) int {
	t.Helper()
	var ft frameTape
	f := &sdk.Frame{Kind: sdk.KindLine, Data: data}
	if !json.Valid(data) || !ft.parse(f) {
		return 0
	}
	m, err := parseRPCTape(&ft, data)
	if err != nil {
		return 0
	}
	n := 0
	var kept []obj
	for _, o := range []obj{m.params, m.result, m.errObj} {
		if o != nil {
			n += sameItems(t, o, "$", 0)
			kept = append(kept, keep(o))
		}
	}
	next := []byte(`{"id":1,"result":{"a":[{"b":[1,2,3]}],"c":[[4],{"d":[5]}]}}`) // the next frame, mapped
	if !ft.parse(&sdk.Frame{Kind: sdk.KindLine, Data: next}) {
		t.Fatal("the tape refused the next frame")
	}
	if _, err := parseRPCTape(&ft, next); err != nil {
		t.Fatal(err)
	}
	for _, o := range kept {
		sameItems(t, o, "kept", 0)
	}
	return n
}

// FuzzItems: on any frame, the items read from the tape are the split ones.
func FuzzItems(f *testing.F) {
	for _, s := range []string{`{"method":"m","params":{"a":[1,{"b":[{"c":2}]}],"d":{"e":[]}}}`,
		`{"id":1,"result":{"content":[{"type":"diff","changes":[{"operation":"add","path":"/p"}]}]}}`, `{"id":1,"error":{"data":[[],[{}]]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { itemsOfFrame(t, data) })
}
