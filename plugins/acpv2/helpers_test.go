package acpv2

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/mappertest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var base = time.Date(2026, 10, 26, 14, 30, 41, 207_000_000, time.UTC)

const testWire = "wire/c-test.jsonl"

// engineTestdata holds the recording engine's fixtures and golden streams
// (plugins/internal/acpasr/testdata): the acpv2 plugin's recording is the engine's, with
// the options its tests use.
var engineTestdata = filepath.Join("..", "internal", "acpasr", "testdata")

func startReq(config string) sdk.StartRequest {
	return sdk.StartRequest{Config: []byte(config), Connection: "c-test", WireLog: testWire, Input: Input, Mode: sdk.ModeRecord}
}

// loadFrames reads a fixture of the engine's (plugins/internal/acpasr/testdata/<name>.frames).
func loadFrames(t testing.TB, name string) []sdk.Frame {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(engineTestdata, name+".frames"))
	if err != nil {
		t.Fatal(err)
	}
	return mappertest.ParseFixture(t, base, string(b))
}

// mapAll runs a fresh mapper over frames and finishes it.
func mapAll(t testing.TB, req sdk.StartRequest, frames []sdk.Frame) []sdk.Output {
	t.Helper()
	return mappertest.Run(t, New(), req, frames, 0)
}

// rec is one decoded record or header, for assertions.
type rec map[string]any

// records decodes the header and record outputs of one session.
func records(t testing.TB, outs []sdk.Output, session string) []rec {
	t.Helper()
	var out []rec
	for _, o := range outs {
		if (o.Kind == sdk.ASRHeader || o.Kind == sdk.ASRRecord) && o.Session == session {
			var r rec
			if err := json.Unmarshal(o.JSON, &r); err != nil {
				t.Fatalf("output is not JSON: %v: %s", err, o.JSON)
			}
			out = append(out, r)
		}
	}
	return out
}

// js renders a decoded value back as compact JSON, for comparisons.
func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// render writes outputs one per line, for golden files.
func render(outs []sdk.Output) []byte { return mappertest.Render(outs) }
