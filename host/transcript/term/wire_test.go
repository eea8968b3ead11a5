package term

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const wireLog = `{"type":"header","format":"acptap-wire","version":1,"connection":"c-1","startedAt":"2026-02-01T08:00:00Z","agent":{"command":["codex-acp"]}}
{"type":"frame","seq":1,"at":"2026-02-01T08:00:00Z","dir":"c2a","line":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/new\",\"params\":{\"cwd\":\"/w\\u001b]52;c;x\\u0007\",\"mcpServers\":[]}}"}
{"type":"frame","seq":2,"at":"2026-02-01T08:00:01Z","dir":"a2c","line":"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32603,\"message\":\"Internal error\"}}"}
{"type":"frame","seq":3,"at":"2026-02-01T08:00:02Z","dir":"a2c","line":"oops \u001b]52;c;x\u0007"}
`

// TestWire: a wire log's frames, the request a response answers and the
// failures at the end; coloured output has no escape but its own SGR
// codes (before the move to this package, coloured wire output wrote the
// codes without their ESC "[").
func TestWire(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c-1.jsonl")
	if err := os.WriteFile(p, []byte(wireLog), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, colour := range []bool{false, true} {
		var out bytes.Buffer
		if err := Wire(&out, p, colour); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		plain := s
		if colour {
			if n := strings.Count(s, "\x1b"); n == 0 || n != strings.Count(s, "\x1b[") || strings.Contains(s, "\x1b]52") {
				t.Errorf("colour: %q", s)
			}
			plain = stripSGR(s)
		}
		for _, want := range []string{
			"wire log of connection c-1\n",
			"  agent   codex-acp\n",
			"editor → agent session/new #1  ",
			`agent → editor #1 error -32603 Internal error (session/new)`,
			"3 frames\n",
			"failed: session/new: -32603 Internal error",
			`not JSON-RPC  oops \x1b]52;c;x\a`,
		} {
			if !strings.Contains(plain, want) {
				t.Errorf("colour %v: missing %q in:\n%s", colour, want, plain)
			}
		}
	}
}

func stripSGR(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := strings.IndexByte(s[i:], 'm')
			i += j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// TestReport: the store summary the demo prints, with a record type that
// holds an escape written visibly.
func TestReport(t *testing.T) {
	dir := t.TempDir()
	s := filepath.Join(dir, "sessions", "s1")
	if err := os.MkdirAll(s, 0o700); err != nil {
		t.Fatal(err)
	}
	stream := `{"type":"header"}` + "\n" + `{"type":"state"}` + "\n" + `{"type":"x\u001b[2J"}` + "\n"
	if err := os.WriteFile(filepath.Join(s, "stream.asr.jsonl"), []byte(stream), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if !Report(&out, dir) {
		t.Fatal("not ok")
	}
	want := "\nASR stream " + filepath.Join(s, "stream.asr.jsonl") + "\n  3 lines: header 1, state 1, x^[[2J 1\n"
	if out.String() != want {
		t.Errorf("%q, want %q", out.String(), want)
	}
	if Report(&bytes.Buffer{}, t.TempDir()) {
		t.Error("an empty store is ok")
	}
}
