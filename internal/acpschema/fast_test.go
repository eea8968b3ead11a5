package acpschema

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The fast path (decode.go, fastvalid.go) must never change a verdict or a
// message. These tests compare it with what jsonschema and encoding/json
// say, on every fixture frame of the repository and on mutated frames.

// frame is one fixture line and the side that sent it (-1: unknown).
type frame struct {
	from Sender
	line []byte
	src  string
}

// corpus reads every fixture frame: this package's testdata (the bench
// workload, the synthetic session of plugins/internal/acpasr's benchmark, the lines of
// the repository's Go tests), plugins/internal/acpasr's .frames and plugins/acpv2's
// golden ACP output.
func corpus(t testing.TB) []frame {
	t.Helper()
	var files []string
	for _, g := range []string{"testdata/*.frames", "../../plugins/internal/acpasr/testdata/*.frames", "../../plugins/acpv2/testdata/*.acp.golden"} {
		m, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 6 {
		t.Fatalf("fixture files = %v", files)
	}
	var out []frame
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			l := sc.Text()
			if l == "" || l[0] == '#' || (strings.HasSuffix(f, ".golden") && !strings.HasPrefix(l, `{"jsonrpc"`)) {
				continue // golden ACP output ends with a pretty-printed report
			}
			fr := frame{from: -1, src: f}
			switch {
			case strings.HasPrefix(l, "c2a "):
				fr.from, l = Client, l[4:]
			case strings.HasPrefix(l, "a2c "):
				fr.from, l = Agent, l[4:]
			}
			fr.line = []byte(l)
			out = append(out, fr)
		}
	}
	return out
}

// senders are the sides a frame is checked as: its own, or both.
func (f frame) senders() []Sender {
	if f.from < 0 {
		return []Sender{Agent, Client}
	}
	return []Sender{f.from}
}

func slowChecker(t testing.TB, v Version, tolerant bool) (fast, slow *Checker) {
	t.Helper()
	var err error
	if fast, err = NewChecker(v); err != nil {
		t.Fatal(err)
	}
	if slow, err = NewChecker(v); err != nil {
		t.Fatal(err)
	}
	slow.slow = true
	fast.SetTolerant(tolerant)
	slow.SetTolerant(tolerant)
	return fast, slow
}

// sameCheck checks line with both checkers and fails unless they agree
// (error text and batch entries).
func sameCheck(t testing.TB, fast, slow *Checker, from Sender, line []byte) error {
	t.Helper()
	ef, es := fast.Check(from, line), slow.Check(from, line)
	if fmt.Sprint(ef) != fmt.Sprint(es) {
		t.Fatalf("%s %s:\nfast: %v\nslow: %v", from, line, ef, es)
	}
	if ef != nil && !slices.Equal(ef.(*Error).Entries, es.(*Error).Entries) {
		t.Fatalf("%s %s: entries %v vs %v", from, line, ef.(*Error).Entries, es.(*Error).Entries)
	}
	return ef
}

// TestFastSameVerdictsOnFixtures: every fixture frame gets the same
// verdict and message with and without the fast path, checked in order
// by a tolerant and a strict checker of each version, and the checkers
// count the same messages.
func TestFastSameVerdictsOnFixtures(t *testing.T) {
	frames := corpus(t)
	for _, v := range []Version{V1, V2} {
		for _, tolerant := range []bool{true, false} {
			fast, slow := slowChecker(t, v, tolerant)
			bad := 0
			for _, f := range frames {
				for _, from := range f.senders() {
					if sameCheck(t, fast, slow, from, f.line) != nil {
						bad++
					}
				}
			}
			if !reflect.DeepEqual(fast.Counts(), slow.Counts()) || fast.Messages() != slow.Messages() {
				t.Errorf("v%d tolerant=%v: counts differ:\n%v\n%v", v, tolerant, fast.Counts(), slow.Counts())
			}
			t.Logf("v%d tolerant=%v: %d frames, %d checks failed (same messages)", v, tolerant, len(frames), bad)
		}
	}
}

// TestFastConformingWorkloadIsFast: the frames of the benchmarks'
// workloads are decoded by decodeJSON and found valid by the fast check
// alone (else the fast path would silently not be one).
func TestFastConformingWorkloadIsFast(t *testing.T) {
	cs, err := loadSchema(V2)
	if err != nil {
		t.Fatal(err)
	}
	var fc fastCheck
	n := 0
	for _, f := range corpus(t) {
		if !strings.HasSuffix(f.src, "acpgen.frames") && !strings.HasSuffix(f.src, "synthetic.frames") {
			continue
		}
		v, ok := decodeJSON(f.line)
		if !ok {
			t.Fatalf("decodeJSON failed on %s", f.line)
		}
		m := v.(map[string]any)
		if m["method"] != "session/update" {
			continue
		}
		p := m["params"].(map[string]any)
		kind := p["update"].(map[string]any)["sessionUpdate"].(string)
		if r := fc.valid(cs.fast[cs.updates[kind]], p); r != yes {
			t.Errorf("fast check = %v for %s", r, f.line)
		}
		if r := fc.valid(cs.fast[cs.envelope[Agent]], v); r != yes {
			t.Errorf("fast envelope check = %v for %s", r, f.line)
		}
		n++
	}
	if n < 200 {
		t.Errorf("only %d session/update frames in the workloads", n)
	}
}

// roots lists every compiled schema of cs (envelopes, batches, method
// definitions, update branches), sorted by location for determinism.
func roots(cs *compiledSchema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	for _, m := range []map[Sender]*jsonschema.Schema{cs.envelope, cs.batch} {
		for _, s := range m {
			out = append(out, s)
		}
	}
	for _, m := range []map[string]*jsonschema.Schema{cs.calls, cs.updates} {
		for _, s := range m {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Location < out[j].Location })
	return slices.Compact(out)
}

// stats counts the fast check's answers in a differential run.
type stats struct{ yes, no, unsure int }

// crossCheck applies every root schema to v and to its params, result
// and params.update (most are the wrong schema for the value, which
// exercises "invalid" as much as "valid"), and fails when the fast check
// answers and jsonschema disagrees.
func crossCheck(t testing.TB, cs *compiledSchema, fc *fastCheck, rs []*jsonschema.Schema, v any, st *stats) {
	t.Helper()
	vals := []any{v}
	if m, ok := v.(map[string]any); ok {
		for _, k := range []string{"params", "result"} {
			if x, ok := m[k]; ok {
				vals = append(vals, x)
				if p, ok := x.(map[string]any); ok {
					if u, ok := p["update"]; ok {
						vals = append(vals, u)
					}
				}
			}
		}
	}
	for _, x := range vals {
		for _, s := range rs {
			r := fc.valid(cs.fast[s], x)
			switch r {
			case unsure:
				st.unsure++
				continue
			case yes:
				st.yes++
			case no:
				st.no++
			}
			err := s.Validate(x)
			if (r == yes) != (err == nil) {
				b, _ := json.Marshal(x)
				t.Fatalf("%s on %s: fast %v, jsonschema %v", s.Location, b, r, err)
			}
		}
	}
}

// TestFastCrossCheckFixtures: on every fixture value, the fast check's
// answers (valid or invalid) are jsonschema's, for every root schema.
func TestFastCrossCheckFixtures(t *testing.T) {
	frames := corpus(t)
	if testing.Short() {
		frames = frames[:len(frames)/8]
	}
	for _, v := range []Version{V1, V2} {
		cs, err := loadSchema(v)
		if err != nil {
			t.Fatal(err)
		}
		rs := roots(cs)
		var fc fastCheck
		var st, tst stats
		for _, f := range frames {
			// The tape form too (tape_test.go); it takes every fixture frame.
			if !crossCheckTape(t, cs, rs, f.line, &tst) {
				t.Errorf("the tape refuses %s", f.line)
			}
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(f.line))
			if err != nil {
				t.Fatalf("%s: %v", f.line, err)
			}
			if arr, ok := inst.([]any); ok {
				for _, e := range arr {
					crossCheck(t, cs, &fc, rs, e, &st)
				}
				continue
			}
			crossCheck(t, cs, &fc, rs, inst, &st)
		}
		t.Logf("v%d: %d roots; fast answered valid %d, invalid %d, unsure %d", v, len(rs), st.yes, st.no, st.unsure)
		t.Logf("v%d: on the tape: valid %d, invalid %d; unsure where decoded answered %d", v, tst.yes, tst.no, tst.unsure)
		if st.yes == 0 || st.no == 0 || tst.yes == 0 || tst.no == 0 {
			t.Errorf("v%d: the fast check answered too little: %+v, on the tape %+v", v, st, tst)
		}
	}
}

// tricky are frames on the edges the fast path must get right: JSON
// details (escapes, duplicate keys, number forms), integer formats and
// their ranges, null against missing, formats, unknown and vendor values.
var tricky = []string{
	// Escapes: in an enum value, a key, a const.
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"st\u0061te_update","state":"running"}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"state_update","st\u0061te":"idle","stopReason":"end\u005fturn"}}}`,
	`{"jsonrpc":"2\u002e0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"running"}}}`,
	`{"jsonrpc":"2.0","method":"session\/update","params":{"sessionId":"s\ud83d\ude00","update":{"sessionUpdate":"state_update","state":"running"}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s\ud800","update":{"sessionUpdate":"state_update","state":"running"}}}`,
	"{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"sessionId\":\"s\xff\xfe\",\"update\":{\"sessionUpdate\":\"state_update\",\"state\":\"running\"}}}",
	"{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"sessionId\":\"naïve —\",\"update\":{\"sessionUpdate\":\"state_update\",\"state\":\"running\"}}}",
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"a\"b\\c\/d\b\f\n\r\t","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"é\n\u00e9\ud83d\u0000"}}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"te\\xt","text":"x"}}}}`,
	"{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"sessionId\":\"s\",\"update\":{\"sessionUpdate\":\"agent_message_chunk\",\"messageId\":\"m\xc3\",\"content\":{\"type\":\"text\",\"text\":\"\\n\xe2\x80\"}}}}",
	`{"a":"\`, `{"a":"\"}`, `{"a":"\u12"}`, `{"a":"\u12G4"}`, `{"\u0061":1,"a":2}`,
	// Duplicate keys: the last one counts.
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"bogus","sessionUpdate":"state_update","state":"running"}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"running","state":7}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","sessionId":5,"update":{"sessionUpdate":"state_update","state":"running"}}}`,
	`{"jsonrpc":"2.0","jsonrpc":"1.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"running"}}}`,
	// Integers: uint64 used/size, uint32 line, forms and ranges.
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":1e3,"size":1.0}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":-0,"size":0.0}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":-1,"size":2}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":1.5,"size":2}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":18446744073709551615,"size":2}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":18446744073709551616,"size":2}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":1E400,"size":2}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":1e-400,"size":2}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":12e-1,"size":120e-1}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":"5","size":2}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":5,"size":2,"cost":null}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":5,"size":2,"cost":{"amount":0.5,"currency":"USD"}}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","locations":[{"path":"/a","line":4294967295}]}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","locations":[{"path":"/a","line":4294967296}]}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","locations":[{"path":"/a","line":null},{"path":"rel"}]}}}`,
	`{"jsonrpc":"2.0","id":1e0,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`,
	`{"jsonrpc":"2.0","id":9223372036854775808,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`,
	`{"jsonrpc":"2.0","id":-9223372036854775808,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`,
	`{"jsonrpc":"2.0","id":1.5,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`,
	`{"jsonrpc":"2.0","id":null,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`,
	`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":65536,"info":{"name":"n","version":"1"}}}`,
	`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2.0,"info":{"name":"n","version":"1"}}}`,
	// Null against missing, _meta, annotations, formats, vendor values.
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"x","annotations":null,"_meta":null}},"_meta":null}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"x","_meta":[]}}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":null,"content":{"type":"text","text":"x"}}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"x","annotations":{"audience":["user","_bot",7],"priority":1,"lastModified":"2025-01-02T03:04:05Z"}}}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"x","annotations":{"priority":1.0000001}}}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"x","annotations":{"lastModified":"yesterday"}}}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"x","annotations":{"lastModified":"2025-13-02T03:04:05Z"}}}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"_vendor","whatever":1}}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"image","data":"AA==","mimeType":"image/png","uri":"not a uri"}}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"_vendor_update","anything":[1,2]}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"_paused"}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"idle","stopReason":"_vendor"}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"other","kind":"_k","content":[{"type":"terminal","terminalId":"t"},{"type":"diff","changes":[{"operation":"move","path":"/b"}]}]}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan_update","plan":{"type":"items","entries":[{"content":"a","priority":"urgent","status":"pending"}]}}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"terminal_output_chunk","terminalId":"t","data":"not base64!"}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_content_chunk","toolCallId":"c","content":{"type":"content","content":{"type":"text"}}}}}`,
	// Envelopes.
	`{"jsonrpc":"2.0","method":"session/update","params":null}`,
	`{"jsonrpc":"2.0","method":"session/update"}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"running"}},"extra":1}`,
	`{"jsonrpc":"2.0","method":"session/update","id":3,"params":{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"running"}}}`,
	`{"jsonrpc":"2.0","id":3,"result":{},"error":{"code":1,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":3,"error":{"code":2147483648,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":3,"error":{"code":-32601.0,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":3,"error":{"code":-3.2601e4,"message":"m","data":{"x":1}}}`,
	`{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":7}}`,
	`{"jsonrpc":"2.0","id":3,"error":{"code":12,"message":"m"}}`,
	`{"jsonrpc":"2.0","method":"_vendor/x","params":[1]}`,
	`[{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"running"}}},{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}]`,
	`[]`, `[1]`, `7`, `"x"`, `null`, `{}`,
	// Not JSON, or JSON with something after it.
	`{"jsonrpc":"2.0"} {}`, `{"jsonrpc":"2.0",}`, `{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":"\x"}`, `{"a":tru}`, "{\"a\":\"\t\"}", ` {"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}} `, "\ufeff{}",
}

// TestFastTrickyFrames: the frames above get the same verdicts and
// messages with and without the fast path, in every checker mode, and the
// fast check agrees with jsonschema on them for every root schema.
func TestFastTrickyFrames(t *testing.T) {
	for _, v := range []Version{V1, V2} {
		cs, _ := loadSchema(v)
		rs := roots(cs)
		var fc fastCheck
		var st stats
		for _, tolerant := range []bool{true, false} {
			fast, slow := slowChecker(t, v, tolerant)
			for _, l := range tricky {
				for _, from := range []Sender{Agent, Client} {
					sameCheck(t, fast, slow, from, []byte(l))
				}
				if inst, err := jsonschema.UnmarshalJSON(strings.NewReader(l)); err == nil {
					crossCheck(t, cs, &fc, rs, inst, &st)
				}
			}
		}
		t.Logf("v%d: fast answered valid %d, invalid %d, unsure %d", v, st.yes, st.no, st.unsure)
	}
}

// sameDecode fails unless decodeJSON, when it decodes b, gives what
// jsonschema.UnmarshalJSON gives; it reports whether both decoded b.
func sameDecode(t testing.TB, b []byte) bool {
	t.Helper()
	got, ok := decodeJSON(b)
	want, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if ok && err != nil {
		t.Fatalf("decodeJSON accepts %q, encoding/json: %v", b, err)
	}
	if ok && !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeJSON(%q) = %#v, encoding/json %#v", b, got, want)
	}
	return ok
}

// TestDecodeSameAsEncodingJSON: decodeJSON decodes every fixture frame
// and the tricky frames as encoding/json does, and refuses what it refuses.
func TestDecodeSameAsEncodingJSON(t *testing.T) {
	for _, f := range corpus(t) {
		if !sameDecode(t, f.line) {
			t.Errorf("decodeJSON refuses %s", f.line)
		}
	}
	for _, l := range tricky {
		ok := sameDecode(t, []byte(l))
		if _, err := jsonschema.UnmarshalJSON(strings.NewReader(l)); (err == nil) != ok {
			t.Errorf("decodeJSON ok=%v, encoding/json %v on %q", ok, err, l)
		}
	}
	deep := strings.Repeat("[", maxDecodeDepth+1) + strings.Repeat("]", maxDecodeDepth+1)
	if _, ok := decodeJSON([]byte(deep)); ok {
		t.Error("decodeJSON decodes beyond maxDecodeDepth")
	}
}

// TestIDKey: idKey writes the ids decoded from JSON as json.Marshal does.
func TestIDKey(t *testing.T) {
	for _, l := range []string{`null`, `0`, `-0`, `12`, `1.5e3`, `18446744073709551616`, `"a"`, `"<&>"`, `"\u2028"`, `"\ud800"`, `true`, `[1]`, `{"a":1}`} {
		v, ok := decodeJSON([]byte(l))
		if !ok {
			t.Fatalf("decodeJSON %s", l)
		}
		want, _ := json.Marshal(v)
		if got := idKey(v); got != string(want) {
			t.Errorf("idKey(%s) = %s, want %s", l, got, want)
		}
	}
}

// FuzzDecode: whatever decodeJSON decodes, encoding/json decodes the same.
//
//	go test ./internal/acpschema -run '^$' -fuzz FuzzDecode -fuzztime 5m
func FuzzDecode(f *testing.F) {
	for _, fr := range corpus(f) {
		f.Add(fr.line)
	}
	for _, l := range tricky {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sameDecode(t, b)
	})
}

// FuzzCheck: on any line, both sides, the checker with the fast path
// gives the verdicts and messages of the checker without it, and the fast
// check agrees with jsonschema on every root schema.
//
//	go test ./internal/acpschema -run '^$' -fuzz 'FuzzCheck$' -fuzztime 5m
func FuzzCheck(f *testing.F) {
	for _, fr := range corpus(f) {
		f.Add(fr.line)
	}
	for _, l := range tricky {
		f.Add([]byte(l))
	}
	cs, err := loadSchema(V2)
	if err != nil {
		f.Fatal(err)
	}
	rs := roots(cs)
	f.Fuzz(func(t *testing.T, b []byte) {
		checkBoth(t, cs, rs, b)
	})
}

func checkBoth(t *testing.T, cs *compiledSchema, rs []*jsonschema.Schema, b []byte) {
	for _, tolerant := range []bool{true, false} {
		fast, slow := slowChecker(t, V2, tolerant)
		for _, from := range []Sender{Agent, Client} {
			sameCheck(t, fast, slow, from, b)
		}
	}
	sameDecode(t, b)
	var st stats
	crossCheckTape(t, cs, rs, b, &st)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return
	}
	var fc fastCheck
	if arr, ok := inst.([]any); ok {
		for _, e := range arr {
			crossCheck(t, cs, &fc, rs, e, &st)
		}
		return
	}
	crossCheck(t, cs, &fc, rs, inst, &st)
}

// FuzzMutate is the structure-aware fuzzer: it takes a fixture frame
// (pick), changes its decoded value as ops say (drops members or items,
// sets values of other types, interesting numbers and strings, adds
// unknown or vendor members, wraps values), writes it back with \u escapes
// and duplicate keys where ops say, then checks as FuzzCheck does.
//
//	go test ./internal/acpschema -run '^$' -fuzz FuzzMutate -fuzztime 10m
func FuzzMutate(f *testing.F) {
	frames := corpus(f)
	for i := 0; i < len(frames); i += 8 { // pick reaches every frame anyway
		f.Add(uint16(i), []byte{byte(i), byte(i >> 3), 1, byte(i * 7), 2, 3})
	}
	cs, err := loadSchema(V2)
	if err != nil {
		f.Fatal(err)
	}
	rs := roots(cs)
	f.Fuzz(func(t *testing.T, pick uint16, ops []byte) {
		fr := frames[int(pick)%len(frames)]
		var v any
		d := json.NewDecoder(bytes.NewReader(fr.line))
		d.UseNumber()
		if d.Decode(&v) != nil {
			return
		}
		m := &mutator{ops: ops}
		for n := int(m.next()%6) + 1; n > 0; n-- {
			v = m.mutate(v)
		}
		var buf bytes.Buffer
		m.write(&buf, v)
		checkBoth(t, cs, rs, buf.Bytes())
	})
}

type mutator struct {
	ops []byte
	i   int
}

func (m *mutator) next() int {
	if m.i >= len(m.ops) {
		return 0
	}
	m.i++
	return int(m.ops[m.i-1])
}

// values are what a mutation puts in place of a value.
var values = []any{
	nil, true, false, "", "x", "_vendor", "other",
	json.Number("0"), json.Number("1"), json.Number("-1"), json.Number("1.0"), json.Number("1e3"), json.Number("-0"),
	json.Number("0.5"), json.Number("1.5e2"), json.Number("2E-1"), json.Number("65535"), json.Number("65536"),
	json.Number("4294967295"), json.Number("4294967296"), json.Number("2147483648"), json.Number("-2147483649"),
	json.Number("9223372036854775807"), json.Number("9223372036854775808"), json.Number("-9223372036854775809"),
	json.Number("18446744073709551615"), json.Number("18446744073709551616"), json.Number("1E400"), json.Number("1e-400"),
	json.Number("100e-2"), json.Number("0.1e1"), json.Number("-32601"), json.Number("-32700"), json.Number("-32000"),
	json.Number("-3.2002e4"),
	"text", "image", "audio", "resource_link", "resource", "content", "diff", "terminal", "items",
	"running", "idle", "requires_action", "unknown", "end_turn", "cancelled", "max_tokens", "error", "refusal",
	"pending", "in_progress", "completed", "failed", "high", "medium", "low", "read", "edit", "execute",
	"assistant", "user", "add", "modify", "move", "delete", "copy", "git_patch", "selected", "allow_once",
	"agent_message_chunk", "user_message_chunk", "agent_thought_chunk", "tool_call_update", "tool_call_content_chunk",
	"state_update", "plan_update", "usage_update", "terminal_output_chunk", "terminal_update", "session_info_update",
	"2025-01-02T03:04:05Z", "2025-01-02T03:04:05.5+01:00", "2025-02-30T00:00:00Z", "file:///w/x.go", "https://x.invalid/a?b",
	"not a uri", "/abs/path", "rel/path", "C:\\w\\x", "session/update", "2.0", "AA==",
	map[string]any{}, []any{}, map[string]any{"_meta": nil}, map[string]any{"type": "text", "text": "t"},
	[]any{"user", "assistant"}, []any{json.Number("1")},
}

var keys = []string{
	"foo", "_meta", "_x", "annotations", "type", "text", "content", "status", "kind", "title", "locations",
	"rawInput", "rawOutput", "priority", "audience", "lastModified", "sessionUpdate", "sessionId", "messageId",
	"toolCallId", "terminalId", "data", "used", "size", "cost", "state", "stopReason", "plan", "entries", "line",
	"path", "id", "method", "params", "result", "error", "jsonrpc", "name", "uri", "mimeType",
}

// mutate changes one value somewhere in v (chosen by ops) and returns v.
func (m *mutator) mutate(v any) any {
	target := m.next() % count(v)
	n := 0
	return m.visit(v, target, &n)
}

// count is the number of values in v (v itself, members, items, nested).
func count(v any) int {
	n := 1
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			n += count(e)
		}
	case []any:
		for _, e := range x {
			n += count(e)
		}
	}
	return n
}

// visit walks v in pre-order (keys sorted) and changes the target-th value.
func (m *mutator) visit(v any, target int, n *int) any {
	if *n == target {
		*n++
		return m.change(v)
	}
	*n++
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			x[k] = m.visit(x[k], target, n)
		}
	case []any:
		for i := range x {
			x[i] = m.visit(x[i], target, n)
		}
	}
	return v
}

// change returns v changed by one operation.
func (m *mutator) change(v any) any {
	switch m.next() % 7 {
	case 0: // drop a member or an item
		switch x := v.(type) {
		case map[string]any:
			if ks := sortedKeys(x); len(ks) > 0 {
				delete(x, ks[m.next()%len(ks)])
			}
		case []any:
			if len(x) > 0 {
				i := m.next() % len(x)
				return append(x[:i:i], x[i+1:]...)
			}
		}
	case 1, 2: // another value
		return clone(values[m.next()%len(values)])
	case 3: // a new or replaced member
		if x, ok := v.(map[string]any); ok {
			x[keys[m.next()%len(keys)]] = clone(values[m.next()%len(values)])
		}
	case 4: // a vendor or shortened string
		if s, ok := v.(string); ok {
			if m.next()%2 == 0 {
				return "_" + s
			} else if s != "" {
				return s[1:]
			}
		}
	case 5: // the same number written otherwise, or its opposite
		if n, ok := v.(json.Number); ok {
			forms := []string{string(n) + ".0", string(n) + "e0", string(n) + "E+00", string(n) + "0e-1", "-" + strings.TrimPrefix(string(n), "-")}
			return json.Number(forms[m.next()%len(forms)])
		}
	case 6: // wrapped
		if m.next()%2 == 0 {
			return []any{v}
		}
		return map[string]any{keys[m.next()%len(keys)]: v}
	}
	return v
}

func sortedKeys(x map[string]any) []string {
	ks := make([]string, 0, len(x))
	for k := range x {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func clone(v any) any {
	switch x := v.(type) {
	case map[string]any:
		c := make(map[string]any, len(x))
		for k, e := range x {
			c[k] = clone(e)
		}
		return c
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = clone(e)
		}
		return c
	}
	return v
}

// write writes v as JSON: keys sorted, some characters of strings as \u
// escapes and some members preceded by a duplicate of another value, as
// ops say.
func (m *mutator) write(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		fmt.Fprint(b, x)
	case json.Number:
		b.WriteString(string(x))
	case string:
		m.writeString(b, x)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			m.write(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for i, k := range sortedKeys(x) {
			if i > 0 {
				b.WriteByte(',')
			}
			if m.next()%16 == 1 { // a duplicate first: the last one counts
				m.writeString(b, k)
				b.WriteByte(':')
				m.write(b, values[m.next()%len(values)])
				b.WriteByte(',')
			}
			m.writeString(b, k)
			b.WriteByte(':')
			m.write(b, x[k])
		}
		b.WriteByte('}')
	}
}

func (m *mutator) writeString(b *bytes.Buffer, s string) {
	esc := -1
	if m.next()%8 == 1 && s != "" {
		esc = m.next() % len(s)
	}
	q, _ := json.Marshal(s)
	if esc < 0 || s[esc] >= 0x80 {
		b.Write(q)
		return
	}
	// Re-encode with the byte at esc as \u00XX.
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if i == esc {
			fmt.Fprintf(b, `\u%04x`, s[i])
			continue
		}
		e, _ := json.Marshal(s[i : i+1])
		if s[i] >= 0x80 {
			// Copy the rest of a multi-byte character as it is.
			j := i + 1
			for j < len(s) && s[j]&0xC0 == 0x80 && j != esc {
				j++
			}
			e, _ = json.Marshal(s[i:j])
			i = j - 1
		}
		b.Write(e[1 : len(e)-1])
	}
	b.WriteByte('"')
}

// TestFastSharedChecker: one checker used from several goroutines (the
// fast check's scratch space is the checker's, under its lock).
func TestFastSharedChecker(t *testing.T) {
	c, err := NewChecker(V2)
	if err != nil {
		t.Fatal(err)
	}
	c.SetTolerant(true)
	var frames [][]byte
	for _, f := range corpus(t) {
		if f.from == Agent && strings.HasSuffix(f.src, "synthetic.frames") {
			frames = append(frames, f.line)
		}
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for _, l := range frames {
				if err := c.Check(Agent, l); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if c.Messages() != 4*len(frames) {
		t.Errorf("Messages = %d, want %d", c.Messages(), 4*len(frames))
	}
}
