package acpv2a13

import (
	"encoding/json"
	"flag"
	"path/filepath"
	"testing"
	"time"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/mappertest"
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

// render writes outputs one per line, for golden files.
func render(outs []sdk.Output) []byte { return mappertest.Render(outs) }

// golden compares outputs with testdata/<name>.golden.jsonl (-update
// rewrites it).
func golden(t *testing.T, name string, outs []sdk.Output) {
	t.Helper()
	mappertest.Golden(t, filepath.Join("testdata", name+".golden.jsonl"), outs, *update)
}

// checkStreams: one JSON line per output, no internal error, and every
// session's stream valid ASR (mappertest.CheckStreams).
func checkStreams(t testing.TB, outs []sdk.Output) {
	t.Helper()
	mappertest.CheckStreams(t, outs)
}
