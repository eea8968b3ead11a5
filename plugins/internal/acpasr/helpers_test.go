package acpasr

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
	"github.com/acptap/acptap/sdk/mappertest"
)

// The engine runs in its tests as the acpv2 plugin runs it (plugins/acpv2
// options), so that the golden files are that plugin's output and the
// plugin's own tests compare with them.
const (
	Input       = "acp/2@" + FormatVersionV2
	testPlugin  = "acpv2"
	testVersion = "0.1.0"
)

// v2Mapper is the engine behind the acpv2 plugin's options.
type v2Mapper struct{}

func newMapper() sdk.Mapper { return v2Mapper{} }

func (v2Mapper) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: testPlugin, Version: testVersion, Inputs: []string{Input}, Outputs: []sdk.Format{"asr"}, Capabilities: []sdk.Capability{"record"}}, nil
}

func (v2Mapper) Start(_ context.Context, req sdk.StartRequest) (sdk.Session, error) {
	cfg, err := ParseConfig(req.Config)
	if err != nil {
		return nil, err
	}
	return NewSession(testOptions(cfg), req), nil
}

// testOptions are the acpv2 plugin's engine options.
func testOptions(cfg Config) Options {
	return Options{
		Method:      MethodRecorder,
		Version:     testVersion,
		Plugin:      asr.Plugin{Name: testPlugin, Version: testVersion},
		Source:      asr.Source{Format: "acp", FormatVersion: FormatVersionV2},
		AlwaysLossy: AlwaysLossy,
		Config:      cfg,
	}
}

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var base = time.Date(2026, 10, 26, 14, 30, 41, 207_000_000, time.UTC)

const testWire = "wire/c-test.jsonl"

func startReq(config string) sdk.StartRequest {
	return sdk.StartRequest{Config: []byte(config), Connection: "c-test", WireLog: testWire, Input: Input, Mode: sdk.ModeRecord}
}

// parseFrames turns a fixture into frames the way the host does
// (mappertest.ParseFixture).
func parseFrames(t testing.TB, text string) []sdk.Frame {
	t.Helper()
	return mappertest.ParseFixture(t, base, text)
}

func loadFrames(t testing.TB, name string) []sdk.Frame {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".frames"))
	if err != nil {
		t.Fatal(err)
	}
	return parseFrames(t, string(b))
}

// mapAll runs a fresh mapper over frames and finishes it.
func mapAll(t testing.TB, req sdk.StartRequest, frames []sdk.Frame) []sdk.Output {
	t.Helper()
	return mappertest.Run(t, newMapper(), req, frames, 0)
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

// ofType keeps the records of one type.
func ofType(rs []rec, typ string) []rec {
	var out []rec
	for _, r := range rs {
		if r["type"] == typ {
			out = append(out, r)
		}
	}
	return out
}

// types lists the records' types in order.
func types(rs []rec) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r["type"].(string))
	}
	return out
}

// js renders a decoded value back as compact JSON, for comparisons.
func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func diags(outs []sdk.Output) []sdk.Output {
	var out []sdk.Output
	for _, o := range outs {
		if o.Kind == sdk.Diagnostic {
			out = append(out, o)
		}
	}
	return out
}

func summaries(outs []sdk.Output) []string {
	var out []string
	for _, d := range diags(outs) {
		out = append(out, d.Summary)
	}
	return out
}

// wire builds a fixture from lines.
func wire(lines ...string) string { return strings.Join(lines, "\n") }

// Common fixture lines.
const (
	initReq  = `c2a {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"Test Client","version":"1"}}}`
	initResp = `a2c {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2,"info":{"name":"Claude Code","version":"2.1.0"}}}`
	newReq   = `c2a {"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w/proj","additionalDirectories":["/w/lib"]}}`
	newResp  = `a2c {"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}`
	idle     = `a2c {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}}}`
)

// upd builds an agent → client session/update line for s1.
func upd(update string) string {
	return `a2c {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":` + update + `}}`
}

// opened is a fixture prefix: initialize and session/new for s1.
func opened(lines ...string) string {
	return wire(append([]string{initReq, initResp, newReq, newResp}, lines...)...)
}

// strip drops the envelope fields that change between records (seq, id,
// times, native), for comparing bodies.
func strip(r rec) rec {
	out := rec{}
	for k, v := range r {
		switch k {
		case "seq", "id", "ts", "tsSource", "observedAt", "native":
		default:
			out[k] = v
		}
	}
	return out
}

func decode(s string) rec {
	var r rec
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		panic(err)
	}
	return r
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// render writes outputs one per line, for golden files.
func render(outs []sdk.Output) []byte { return mappertest.Render(outs) }

// golden compares outputs with testdata/<name>.golden.jsonl (-update
// rewrites it).
func golden(t *testing.T, name string, outs []sdk.Output) {
	t.Helper()
	mappertest.Golden(t, filepath.Join("testdata", name+".golden.jsonl"), outs, *update)
}
