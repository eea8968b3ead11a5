package term

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acptap/acptap/host/transcript"
)

var update = flag.Bool("update", false, "rewrite testdata/*.txt")

// TestShowEveryRecordType renders a stream holding every record type and
// the odd shapes of each (unknown and invalid blocks, binary and
// undecodable terminal output, null stop reasons, a refused prompt, lines
// that are not records, a torn tail) and compares it with
// testdata/every-field.txt (-update rewrites it).
func TestShowEveryRecordType(t *testing.T) {
	src := "../testdata/every-field.asr.jsonl"
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	bad, err := Show(&out, f, Options{})
	f.Close()
	if err != nil || bad != 2 {
		t.Fatalf("bad %d, err %v", bad, err)
	}
	golden := filepath.Join("testdata", "every-field.txt")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if out.String() != string(want) {
		t.Errorf("output differs from %s (-update accepts):\n%s", golden, out.String())
	}
}

// TestEveryRecordTypeHasARenderer: each record type the transcript
// decodes has a terminal renderer of its own, and the renderer table
// names no type the transcript does not decode.
func TestEveryRecordTypeHasARenderer(t *testing.T) {
	known := map[string]bool{}
	for _, typ := range transcript.RecordTypes() {
		known[typ] = true
		if renderers[typ] == nil {
			t.Errorf("%s: no renderer", typ)
		}
	}
	for typ := range renderers {
		if !known[typ] {
			t.Errorf("%s: a renderer for a type the transcript does not decode", typ)
		}
	}
}

// TestShowColourOnlyThroughTheSanitiser: with colour on, every ESC in the
// output starts an SGR sequence.
func TestShowColourOnlyThroughTheSanitiser(t *testing.T) {
	f, err := os.Open("../testdata/every-field.asr.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	if _, err := Show(&out, f, Options{Color: true}); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if n := strings.Count(s, "\x1b"); n == 0 || n != strings.Count(s, "\x1b[") {
		t.Errorf("%d ESC, %d SGR", n, strings.Count(s, "\x1b["))
	}
}

// TestShowGoldenStreams: every stream under testdata shows without a line
// that is not shown, each record by its type's renderer.
func TestShowGoldenStreams(t *testing.T) {
	var m []string
	for _, g := range []string{"../../../sdk/asr/testdata/*.asr.jsonl", "../../../plugins/*/testdata/*.asr.jsonl", "../../../plugins/*/testdata/*/*.asr.jsonl"} {
		x, _ := filepath.Glob(g)
		m = append(m, x...)
	}
	if len(m) == 0 {
		t.Fatal("no golden streams found")
	}
	for _, p := range m {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		bad, err := Show(&out, f, Options{})
		f.Close()
		if err != nil || bad > 0 || !strings.HasPrefix(out.String(), "Session ") {
			t.Errorf("%s: %d bad, %v:\n%s", p, bad, err, out.String())
		}
	}
	t.Logf("%d streams", len(m))
}
