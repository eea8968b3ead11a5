package acpasr

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/acptap/acptap/sdk"
)

// objView renders an obj as a map of its members, nested objects read as
// the mapping reads them (obj.object), for comparison.
func objView(o obj, depth int) map[string]any {
	if o == nil {
		return nil
	}
	out := map[string]any{}
	for _, m := range o {
		if n, st := o.object(m.k); st == valid && depth < 8 {
			out[m.k] = objView(n, depth+1)
			continue
		}
		out[m.k] = string(m.v)
	}
	return out
}

// msgView renders an rpcMsg for comparison.
func msgView(m rpcMsg) map[string]any {
	return map[string]any{
		"kind": m.kind, "id": string(m.id), "method": m.method, "paramsBad": m.paramsBad,
		"params": objView(m.params, 0), "result": objView(m.result, 0), "error": objView(m.errObj, 0),
		"raw": string(m.raw),
	}
}

// sameHead fails unless a frame of data maps to the same message read
// from the tape (parseRPCTape) and scanned (parseRPCChecked), or the tape
// refuses it.
func sameHead(t *testing.T, data []byte) {
	t.Helper()
	if !json.Valid(data) || !utf8.Valid(data) {
		return
	}
	f := &sdk.Frame{Kind: sdk.KindLine, Data: data}
	want, werr := parseRPCChecked(f, data, false)
	var ft frameTape
	g := &sdk.Frame{Kind: sdk.KindLine, Data: data}
	if !ft.parse(g) {
		return
	}
	got, gerr := parseRPCTape(&ft, data)
	if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
		t.Fatalf("%s: tape error %v, scan error %v", data, gerr, werr)
	}
	if gv, wv := msgView(got), msgView(want); !reflect.DeepEqual(gv, wv) {
		t.Fatalf("%s:\ntape %v\nscan %v", data, gv, wv)
	}
}

// TestTapeHeadSameAsScan: every frame of the fixtures (this package's and
// plugins/acpv2's) reads the same from the tape as scanned.
func TestTapeHeadSameAsScan(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.frames")
	more, _ := filepath.Glob("../../acpv2/testdata/*.acp.golden")
	frames, _ := filepath.Glob("../../../internal/acpschema/testdata/*.frames")
	more = append(more, frames...)
	n := 0
	for _, name := range append(files, more...) {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			l := sc.Text()
			if _, rest, ok := strings.Cut(l, " "); ok && (strings.HasPrefix(l, "c2a ") || strings.HasPrefix(l, "a2c ")) {
				l = rest
			}
			if !strings.HasPrefix(l, "{") {
				continue
			}
			sameHead(t, []byte(l))
			n++
		}
	}
	for _, l := range []string{`{"id":1}`, `{"method":7}`, `{"id":null,"result":null}`, `{"id":"x","error":[1]}`,
		`{"id":2,"error":{"code":1,"message":"m"},"result":{}}`, `{"method":"m","params":[1,2]}`, `{"method":"m","params":null}`,
		`{"method":"m","params":{"a":{"b":{}},"c":[{"d":1}]}}`, ` {"id" : 1 , "result" : { "x" : { } } } `, `[{"id":1}]`, `"x"`} {
		sameHead(t, []byte(l))
	}
	if n < 100 {
		t.Errorf("only %d fixture frames", n)
	}
}

// FuzzTapeHead: on any valid JSON, the tape's reading is the scan's.
func FuzzTapeHead(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]}}}`,
		`{"id":1,"result":{"a":{"b":2}}}`, `{"id":1,"error":{"code":1}}`, `{"method":"x","id":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { sameHead(t, data) })
}
