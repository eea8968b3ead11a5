package aep

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/mappertest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestGoldenSDKSessions maps the wire traces of the official SDK test peers
// (v1 and v2, "everything" mode) and compares the events byte for byte
// with testdata/*.golden.jsonl; every event is valid and the stream breaks
// no rule.
func TestGoldenSDKSessions(t *testing.T) {
	for _, c := range []struct{ name, input string }{
		{"v1-everything", "acp/1"},
		{"v2-everything", "acp/2@2.0.0-alpha.9"},
	} {
		t.Run(c.name, func(t *testing.T) {
			frames := wire(nil, traceLines(t, "testdata/"+c.name+".trace.jsonl")...)
			evs := mapAll(t, defaultCfg(), c.input, frames)
			checkValid(t, evs)
			var got bytes.Buffer
			for _, e := range evs {
				got.Write(e.raw)
				got.WriteByte('\n')
			}
			path := "testdata/" + c.name + ".golden.jsonl"
			if *update {
				if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("events differ from %s (run with -update after checking):\n%s", path, got.String())
			}
		})
	}
}

// TestConformanceSuite is the suite every mapper passes, for both inputs,
// with the SDK sessions as corpus.
func TestConformanceSuite(t *testing.T) {
	for _, input := range Inputs {
		t.Run(input, func(t *testing.T) {
			mappertest.Suite{
				New:   New,
				Start: sdk.StartRequest{Connection: "c-suite", Input: input, Config: []byte(`{"host":"h","deltas":true,"connectionLane":true}`)},
				Corpus: map[string][]sdk.Frame{
					"v1": wire(nil, traceLines(t, "testdata/v1-everything.trace.jsonl")...),
					"v2": wire(map[string]int{"sdk-v2-session-1": 1}, traceLines(t, "testdata/v2-everything.trace.jsonl")...),
				},
			}.Run(t)
		})
	}
}
