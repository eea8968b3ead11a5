package wire

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode"
)

// TestScrubFailsClosed (issue 18, point 12): lines the scrubber could not
// fully parse, or whose servers sit outside params, were stored verbatim
// with their secrets. Each is now scrubbed or cut, never kept.
func TestScrubFailsClosed(t *testing.T) {
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	esc := `"mcp\u0053ervers"`
	servers := `[{"name":"fs","env":[{"name":"K","value":"SECRET-1"}],"args":["SECRET-2"]}]`
	cases := map[string]string{
		"escaped key, too deep for the parser": `{"method":"session/new","params":{` + esc + `:` + servers + `,"x":` + deep + `}}`,
		"escaped key, two objects on a line":   `{"method":"session/new","params":{` + esc + `:` + servers + `}} {"method":"x","params":{"mcpServers":[]}}`,
		"escaped key, not JSON":                `{"method":"session/new","params":{` + esc + `:` + servers,
		"copy under _meta":                     `{"method":"session/new","params":{"cwd":"/","mcpServers":[],"_meta":{"acme":{"mcpServers":` + servers + `}}}}`,
		"other case":                           `{"method":"session/new","params":{"MCPServers":` + servers + `}}`,
		"nested request":                       `{"method":"_acme/wrap","params":{"inner":{"method":"session/new","params":{"mcpServers":` + servers + `}}}}`,
		"fully escaped key":                    `{"method":"session/new","params":{"\u006d\u0063\u0070\u0053\u0065\u0072\u0076\u0065\u0072\u0073":` + servers + `}}`,
		"key under 100 levels":                 `{"method":"session/new","params":` + strings.Repeat(`{"a":`, 100) + `{"mcpServers":` + servers + `}` + strings.Repeat("}", 100) + `}`,
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			out, changed := Scrub([]byte(in))
			if !changed {
				t.Error("reported unchanged")
			}
			if bytes.Contains(out, []byte("SECRET")) {
				t.Errorf("a secret survived: %.300s", out)
			}
		})
	}
}

// spell writes s as a JSON string, \u-escaping the characters whose bit is
// set in mask.
func spell(s string, mask uint64) string {
	var b strings.Builder
	b.WriteByte('"')
	for i, r := range s {
		if mask&(1<<(uint(i)%64)) != 0 && r < 0x80 {
			fmt.Fprintf(&b, `\u%04x`, r)
		} else if r == '"' || r == '\\' {
			b.WriteString(`\` + string(r))
		} else {
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// FuzzScrubNoSecretSurvives (issue 18, point 12): an MCP configuration
// whose env value, header value and argument are a secret, under a key
// spelled with any \u escapes, nested in objects and arrays to any depth,
// with arbitrary bytes before and after it (so the line may be invalid
// JSON or hold two values): the stored line never holds the secret, in
// plain or in the escaped spelling the input used.
func FuzzScrubNoSecretSurvives(f *testing.F) {
	f.Add([]byte(nil), []byte(nil), "tok3n", uint64(0), uint64(0), uint16(0), uint16(0))
	f.Add([]byte(`{"a":1}`), []byte(` {"b":2}`), "s3cret-value", uint64(1<<3), uint64(5), uint16(3), uint16(0b101))
	f.Add([]byte(`[`), []byte(`]]]`), "hunter2", uint64(^uint64(0)), uint64(1), uint16(12000), uint16(0xffff))
	f.Add([]byte(`{"method":"x","params":`), []byte(`}`), "Bearer abc", uint64(0x3ff), uint64(2), uint16(70), uint16(0))
	f.Fuzz(func(t *testing.T, before, after []byte, secret string, keyMask, secretMask uint64, depth, shape uint16) {
		secret = strings.Map(func(r rune) rune {
			if r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
				return r
			}
			return -1
		}, secret)
		if len(secret) < 4 || bytes.Contains(before, []byte(secret)) || bytes.Contains(after, []byte(secret)) {
			t.Skip()
		}
		sec := spell(secret, secretMask)
		server := `{"name":"fs","command":"c","args":["--key",` + sec + `],"env":[{"name":"K","value":` + sec + `}],"headers":{"H":` + sec + `}}`
		inner := `{"method":"session/new","params":{"cwd":"/",` + spell("mcpServers", keyMask) + `:[` + server + `]}}`
		d := int(depth % 12050)
		var b bytes.Buffer
		b.Write(before)
		for i := 0; i < d; i++ {
			if shape&(1<<(i%16)) != 0 {
				b.WriteString(`[`)
			} else {
				b.WriteString(`{"k":`)
			}
		}
		b.WriteString(inner)
		for i := d - 1; i >= 0; i-- {
			if shape&(1<<(i%16)) != 0 {
				b.WriteString(`]`)
			} else {
				b.WriteString(`}`)
			}
		}
		b.Write(after)
		out, _ := Scrub(b.Bytes())
		for _, form := range []string{secret, sec[1 : len(sec)-1]} {
			if bytes.Contains(out, []byte(form)) {
				t.Fatalf("secret %q survived in %.400q", form, out)
			}
		}
	})
}

// TestScrubMetaAndURLs (issue 18, point 13): a copy of the MCP
// configuration under _meta, with keys of the client's own, and the
// credentials in an MCP server's URL do not reach the wire log; the rest
// of the line stays.
func TestScrubMetaAndURLs(t *testing.T) {
	cases := map[string]struct{ in, keep string }{
		"_meta copy under another key": {`{"method":"session/new","params":{"cwd":"/w","mcpServers":[],"_meta":{"zed":{"mcp_config":[{"name":"gh","command":"gh-mcp","env":{"GITHUB_TOKEN":"SECRET-1"},"args":["--token","SECRET-2"]}],"api_key":"SECRET-3","note":"Authorization: Bearer SECRET4SECRET4"}}}}`, `"GITHUB_TOKEN"`},
		"_meta on a prompt":            {`{"method":"session/prompt","params":{"sessionId":"s","prompt":[],"_meta":{"proxy":"https://u:SECRET-5@proxy.example:8080/"}}}`, `proxy.example:8080`},
		"server URL credentials":       {`{"method":"session/new","params":{"cwd":"/w","mcpServers":[{"type":"http","name":"w","url":"https://me:SECRET-6@mcp.example/mcp?api_key=SECRET-7","headers":[]}]}}`, `mcp.example/mcp`},
		"server command with a token":  {`{"method":"session/new","params":{"cwd":"/w","mcpServers":[{"name":"s","command":"mcp --token=SECRET-8","args":[],"env":[]}]}}`, `"name":"s"`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			out, changed := Scrub([]byte(c.in))
			if !changed || bytes.Contains(out, []byte("SECRET")) {
				t.Errorf("changed %v: %s", changed, out)
			}
			if !bytes.Contains(out, []byte(c.keep)) {
				t.Errorf("%s lost: %s", c.keep, out)
			}
			if again, _ := Scrub(out); !bytes.Equal(again, out) {
				t.Errorf("not idempotent: %s → %s", out, again)
			}
		})
	}
	plain := []byte(`{"method":"session/prompt","params":{"sessionId":"s","prompt":[],"_meta":{"trace":"abc"}}}`)
	if out, changed := Scrub(plain); changed || &out[0] != &plain[0] {
		t.Errorf("a _meta without secrets was rewritten: %s", out)
	}
}
