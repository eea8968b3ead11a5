package acpv1

import (
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/mappertest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var base = time.Date(2026, 10, 26, 14, 30, 41, 207_000_000, time.UTC)

const testWire = "wire/c-v1.jsonl"

// startReq is a live recording's start request (convert: ModeConvert).
func startReq(mode sdk.Mode, config string) sdk.StartRequest {
	input := Input
	if mode == sdk.ModeConvert {
		input = InputLog
	}
	return sdk.StartRequest{Config: []byte(config), Connection: "c-v1", WireLog: testWire, Input: input, Mode: mode}
}

var live = startReq(sdk.ModeRecord, "")

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

func ofType(rs []rec, typ string) []rec {
	var out []rec
	for _, r := range rs {
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

func str(v any) string {
	s, _ := v.(string)
	return s
}

func summaries(outs []sdk.Output) []string {
	var out []string
	for _, o := range outs {
		if o.Kind == sdk.Diagnostic {
			out = append(out, o.Summary)
		}
	}
	return out
}

func wire(lines ...string) string { return strings.Join(lines, "\n") }

// Common fixture lines: an ACP v1 handshake and session s1.
const (
	initReq  = `c2a {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true},"clientInfo":{"name":"Zed","version":"0.200.0"}}}`
	initResp = `a2c {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentInfo":{"name":"Claude Code","title":"Claude","version":"2.1.0"},"agentCapabilities":{"loadSession":true}}}`
	newReq   = `c2a {"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w/proj","additionalDirectories":["/w/lib"],"mcpServers":[{"name":"gh","command":"/usr/bin/gh-mcp","args":["--token","SECRET-ARG"],"env":[{"name":"GH_TOKEN","value":"SECRET-ENV"}]}]}}`
	newResp  = `a2c {"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1","modes":{"currentModeId":"code","availableModes":[{"id":"code","name":"Code"},{"id":"ask","name":"Ask"}]}}}`
)

// upd builds an agent → client session/update line for s1.
func upd(update string) string {
	return `a2c {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":` + update + `}}`
}

// prompt is a session/prompt request with id and text; answer its response.
func prompt(id int, text string) string {
	return fmt.Sprintf(`c2a {"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":%q}]}}`, id, text)
}

func answer(id int, stopReason string) string {
	return fmt.Sprintf(`a2c {"jsonrpc":"2.0","id":%d,"result":{"stopReason":%q}}`, id, stopReason)
}

// opened is a fixture prefix: initialize and session/new for s1.
func opened(lines ...string) string {
	return wire(append([]string{initReq, initResp, newReq, newResp}, lines...)...)
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// render writes outputs one per line, for golden files.
func render(outs []sdk.Output) []byte { return mappertest.Render(outs) }

// golden compares outputs with testdata/<name>.golden.jsonl (-update
// rewrites it).
func golden(t *testing.T, name string, outs []sdk.Output) {
	t.Helper()
	mappertest.Golden(t, filepath.Join("testdata", name+".golden.jsonl"), outs, *update)
}

// streams joins each session's header and records, in output order.
func streams(outs []sdk.Output) (map[string][]byte, []string) { return mappertest.Streams(outs) }

// checkStreams: one JSON line per output, no internal error, and every
// session's stream valid ASR (mappertest.CheckStreams).
func checkStreams(t testing.TB, outs []sdk.Output) {
	t.Helper()
	mappertest.CheckStreams(t, outs)
}
