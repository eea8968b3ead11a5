package acpv2a13

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr/asrcheck"
	"github.com/acptap/acptap/sdk/mappertest"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var base = time.Date(2026, 11, 2, 14, 30, 41, 207_000_000, time.UTC)

const testWire = "wire/c-a13.jsonl"

func startReq(config string) sdk.StartRequest {
	return sdk.StartRequest{Config: []byte(config), Connection: "c-a13", WireLog: testWire, Input: Input, Mode: sdk.ModeRecord}
}

var live = startReq("")

func parseFrames(t testing.TB, text string) []sdk.Frame {
	t.Helper()
	return mappertest.ParseFixture(t, base, text)
}

// mapAll runs a fresh mapper over frames, finishes it, and checks that
// every output is one JSON line and every stream passes asrcheck.Validate.
func mapAll(t testing.TB, req sdk.StartRequest, frames []sdk.Frame) []sdk.Output {
	t.Helper()
	outs := mappertest.Run(t, New(), req, frames, 0)
	checkStreams(t, outs)
	return outs
}

// render writes outputs one per line, for golden files.
func render(outs []sdk.Output) []byte {
	var b bytes.Buffer
	for _, o := range outs {
		seqs, _ := json.Marshal(o.FrameSeqs)
		if o.Kind == sdk.Diagnostic {
			fmt.Fprintf(&b, `{"kind":"diagnostic","session":%q,"frames":%s,"severity":%q,"summary":%q,"detail":%q}`+"\n",
				o.Session, seqs, o.Severity, o.Summary, o.Detail)
			continue
		}
		fmt.Fprintf(&b, `{"kind":%q,"session":%q,"frames":%s,"json":%s}`+"\n", o.Kind, o.Session, seqs, o.JSON)
	}
	return b.Bytes()
}

// golden compares outputs with testdata/<name>.golden.jsonl (-update
// rewrites it).
func golden(t *testing.T, name string, outs []sdk.Output) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden.jsonl")
	got := render(outs)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}

// streams joins each session's header and records, in output order.
func streams(outs []sdk.Output) (map[string][]byte, []string) {
	m := map[string][]byte{}
	var order []string
	for _, o := range outs {
		if o.Kind != sdk.ASRHeader && o.Kind != sdk.ASRRecord {
			continue
		}
		if _, ok := m[o.Session]; !ok {
			order = append(order, o.Session)
		}
		m[o.Session] = append(append(m[o.Session], o.JSON...), '\n')
	}
	return m, order
}

// checkStreams: one JSON line per output, no internal error, and every
// session's stream valid ASR (asrcheck.Validate, warnings included).
func checkStreams(t testing.TB, outs []sdk.Output) {
	t.Helper()
	for _, o := range outs {
		if o.Kind == sdk.Diagnostic {
			if strings.HasPrefix(o.Summary, "internal error") {
				t.Fatalf("%s: %s", o.Summary, o.Detail)
			}
			continue
		}
		if !json.Valid(o.JSON) || bytes.IndexByte(o.JSON, '\n') >= 0 {
			t.Fatalf("output is not one JSON line: %q", o.JSON)
		}
	}
	m, order := streams(outs)
	for _, id := range order {
		var problems []string
		if _, err := asrcheck.Validate(bytes.NewReader(m[id]), func(p asrcheck.Problem) { problems = append(problems, p.String()) }); err != nil {
			t.Fatalf("session %q: validate: %v", id, err)
		}
		if len(problems) > 0 {
			t.Fatalf("session %q is not valid ASR:\n  %s\n%s", id, strings.Join(problems, "\n  "), m[id])
		}
	}
}

// records decodes the header and records of one session.
func records(t testing.TB, outs []sdk.Output, session string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, o := range outs {
		if (o.Kind == sdk.ASRHeader || o.Kind == sdk.ASRRecord) && o.Session == session {
			var r map[string]any
			if err := json.Unmarshal(o.JSON, &r); err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
	}
	return out
}

// ofType returns the records of one type.
func ofType(recs []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, r := range recs {
		if r["type"] == typ {
			out = append(out, r)
		}
	}
	return out
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
