package rebuild

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/acptap/acptap/host/pipeline"
	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/sdk"
)

// TestImportWholeCopyOnlyWhenNothingScrubs: a log the scan says nothing of
// can scrub is copied whole, and that copy is the bytes the line-by-line
// import makes; a log with a line the import changes is never said so.
func TestImportWholeCopyOnlyWhenNothingScrubs(t *testing.T) {
	secret := `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[{"name":"x","command":"x","args":[],"env":[{"name":"TOKEN","value":"s3cret"}]}]}}`
	plain := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a \"b\" \\ \u00e9 mcpServers"}}}}`
	prompt := `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`
	for _, tc := range []struct {
		name     string
		edit     func(lines []byte) []byte
		c2a      string
		mayScrub bool
	}{
		{"plain", nil, prompt, false},
		{"a2c names mcpServers", nil, "", false},
		{"c2a names mcpServers in a text", nil, plain, false},
		{"c2a with no MCP server", nil, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`, false},
		{"c2a with an MCP server, scrubbed as it was written", nil, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[{"name":"x","command":"x","args":["-v"],"env":[{"name":"T","value":"v"}]}]}}`, false},
		{"c2a with a secret", nil, secret, true},
		{"c2a with an MCP server scrubbed, in another layout", func(b []byte) []byte {
			return bytes.Replace(b, []byte(`{"type":"frame","seq":1,`), []byte(`{"seq":1,"type":"frame",`), 1)
		}, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[{"name":"x","command":"x","args":["-v"],"env":[]}]}}`, true},
		{"torn tail", func(b []byte) []byte { return append(b, `{"type":"frame","seq":9,"mcpServers`...) }, prompt, true},
		{"bad line", func(b []byte) []byte { return append(b, "{bad mcpServers\n"...) }, prompt, true},
		{"bad line, no key", func(b []byte) []byte { return append(b, "{bad\n"...) }, prompt, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "src.jsonl")
			w, err := wire.Create(src, wire.Header{Connection: "c-x"})
			if err != nil {
				t.Fatal(err)
			}
			if tc.c2a != "" {
				w.Append(wire.Entry{Type: wire.TypeFrame, Dir: sdk.C2A, Line: []byte(tc.c2a)})
			}
			w.Append(wire.Entry{Type: wire.TypeFrame, Dir: sdk.A2C, Line: []byte(plain)})
			w.Append(wire.Entry{Type: wire.TypeGap, Dir: sdk.A2C, Gap: sdk.Gap{Frames: 1, Reason: "mcpServers"}})
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if tc.c2a == secret {
				// A hand-made log: the secret unscrubbed, as the import must scrub it.
				b, _ := os.ReadFile(src)
				enc, _ := wire.EncodeEntry(wire.Entry{Type: wire.TypeFrame, Seq: 1, Dir: sdk.A2C, Line: []byte(secret)})
				enc = bytes.Replace(enc, []byte(`"dir":"a2c"`), []byte(`"dir":"c2a"`), 1)
				lines := bytes.SplitAfterN(b, []byte("\n"), 3)
				os.WriteFile(src, append(append(lines[0], enc...), lines[2]...), 0o600)
			}
			if tc.edit != nil {
				b, _ := os.ReadFile(src)
				os.WriteFile(src, tc.edit(b), 0o600)
			}
			scan, err := pipeline.ScanWire(src)
			if err != nil {
				t.Fatal(err)
			}
			byLine := filepath.Join(dir, "a", "w.jsonl")
			changed, err := importWireChanged(src, byLine)
			if err != nil {
				t.Fatal(err)
			}
			if changed && !scan.MayScrub {
				t.Fatal("the import changed a line the scan said none could")
			}
			whole := filepath.Join(dir, "b", "w.jsonl")
			if _, err := importWireScanned(src, whole, scan); err != nil {
				t.Fatal(err)
			}
			a, _ := os.ReadFile(byLine)
			b, _ := os.ReadFile(whole)
			if !bytes.Equal(a, b) {
				t.Fatalf("copies differ (MayScrub %v)", scan.MayScrub)
			}
			if scan.MayScrub != tc.mayScrub {
				t.Errorf("MayScrub %v, want %v", scan.MayScrub, tc.mayScrub)
			}
			if tc.c2a == secret && (!changed || bytes.Contains(a, []byte("s3cret"))) {
				t.Errorf("the secret was not scrubbed (changed %v)", changed)
			}
		})
	}
}
