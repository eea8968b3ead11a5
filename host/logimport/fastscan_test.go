package logimport

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/acptap/acptap/internal/jsonscan"
)

// decodeReference is decode as it was written first: json.Valid, then the
// members; decode must agree with it on every line.
func decodeReference(line []byte, p *probe) bool {
	if !json.Valid(line) {
		return false
	}
	p.line = line
	str := func(v []byte) *string {
		if s, ok := jsonscan.String(v); ok {
			return &s
		}
		return nil
	}
	jsonscan.Members(line, func(k, v []byte) bool {
		switch string(k) {
		case "id":
			p.ID = v
		case "method":
			p.Method = str(v)
		case "params":
			p.Params = v
		case "result":
			p.Result = v
		case "error":
			p.Error = v
		case "dir":
			p.Dir = str(v)
		case "line":
			p.Line = str(v)
		case "sessionId":
			p.SessionID = v
		case "update":
			p.Update = v
		default:
			for i, tk := range timeKeys {
				if string(k) == tk {
					p.Times[i] = str(v)
				}
			}
		}
		return true
	})
	return true
}

// scanLines is every frame and skip a scanner gives for input, with
// borrowed lines copied at once.
func scanLines(t testing.TB, input []byte, borrow bool) ([]got, []Skip, [3]int) {
	s := NewScanner(bytes.NewReader(input), "", 4096)
	s.Borrow = borrow
	var skips []Skip
	s.OnSkip = func(sk Skip) { skips = append(skips, sk) }
	var out []got
	for {
		f, err := s.Next()
		if errors.Is(err, io.EOF) {
			return out, skips, [3]int{s.Lines, s.Blank, s.Skipped}
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, got{f.Item.Dir.String(), string(f.Item.Line), f.Input, f.Time.String()})
	}
}

var scanSeeds = []string{
	`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`,
	`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`,
	`{ "jsonrpc" : "2.0" , "method" : "session/update" , "params" : { "sessionId" : "s1" } }`,
	`{"jsonrpc":"2.0","m\u0065thod":"session/update","params":{}}`,
	`{"jsonrpc":"2.0","method":"session/update","method":"nope","params":{}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"_meta":{"timestamp":"2026-10-26T14:30:41.207Z"}}}}`,
	`{"jsonrpc":"2.0","method":7,"params":{}}`,
	`{"dir":"send","line":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/new\",\"params\":{}}","at":"2026-10-26T14:30:41Z"}`,
	`{"sessionId":"s1","update":{"sessionUpdate":"plan","entries":[]}}`,
	`{"id":1,"id":2,"result":{}}`, ` {"id":1,"result":{"a":[1,{"b":"c"}]}} `, `{"id":1,"result":{"a":1,"a":2}}`,
	`{"truncated":`, `not json`, `[1]`, `42`, "{\"a\":\"\xff\"}", `{"a":"\ud800"}`, `{"a":1}x`,
}

// TestDecodeMatchesReference: decode and the scanner with borrowed lines
// give what json.Valid and copied lines give, on the seeds and the SDK trace.
func TestDecodeMatchesReference(t *testing.T) {
	for _, s := range scanSeeds {
		checkDecode(t, []byte(s))
	}
	input := []byte(strings.Join(scanSeeds, "\n"))
	checkScan(t, input)
	trace, err := os.ReadFile(sdkTrace)
	if err != nil {
		t.Fatal(err)
	}
	checkScan(t, trace)
	path := filepath.Join(t.TempDir(), "v1.jsonl")
	writeSyntheticLog(t, path, 64<<10)
	synth, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	checkScan(t, synth)
}

func FuzzDecode(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		checkDecode(t, line)
		checkScan(t, append(append([]byte(scanSeeds[0]+"\n"+scanSeeds[1]+"\n"), line...), "\n"+scanSeeds[2]+"\n"...))
	})
}

func checkDecode(t *testing.T, line []byte) {
	t.Helper()
	var a, b, c probe
	okA, okB := decode(line, &a), decodeReference(line, &b)
	if okA != okB || !reflect.DeepEqual(a, b) {
		t.Fatalf("decode(%q) = %v %+v, reference %v %+v", line, okA, a, okB, b)
	}
	// The scanner's decode from its tape, twice (the tape is reused).
	s := NewScanner(bytes.NewReader(nil), "", 4096)
	for range 2 {
		c = probe{}
		okC := s.decodeLine(line, &c)
		// Its answer on a timestamp in the line (from the tape's names) is
		// the search's.
		cc, bb := c, b
		tc, okTC := cc.metaTime()
		tb, okTB := bb.metaTime()
		if okC && (okTC != okTB || !tc.Equal(tb)) {
			t.Fatalf("decodeLine(%q): metaTime %v %v, reference %v %v", line, tc, okTC, tb, okTB)
		}
		c.stamp, c.stampKnown = false, false
		if okC != okB || !reflect.DeepEqual(c, b) {
			t.Fatalf("decodeLine(%q) = %v %+v, reference %v %+v", line, okC, c, okB, b)
		}
	}
}

func checkScan(t *testing.T, input []byte) {
	t.Helper()
	fa, sa, na := scanLines(t, input, true)
	fb, sb, nb := scanLines(t, input, false)
	if !reflect.DeepEqual(fa, fb) || !reflect.DeepEqual(sa, sb) || na != nb {
		t.Fatalf("borrowed lines: %v %v %v; copied: %v %v %v", fa, sa, na, fb, sb, nb)
	}
}
