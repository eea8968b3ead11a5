package wire

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acptap/acptap/sdk"
	"github.com/google/go-cmp/cmp"
)

const stdioServer = `{"name":"fs","command":"/bin/mcp-fs","args":["--token","SECRET-ARG"],"env":[{"name":"API_KEY","value":"SECRET-ENV"}]}`
const httpServer = `{"type":"http","name":"web","url":"https://mcp.example/","headers":[{"name":"Authorization","value":"Bearer SECRET-HDR","_meta":{"k":"SECRET-META"}}]}`

const scrubbedStdio = `{"name":"fs","command":"/bin/mcp-fs","args":["[scrubbed]","[scrubbed]"],"env":[{"name":"API_KEY","value":"[scrubbed]"}]}`
const scrubbedHTTP = `{"type":"http","name":"web","url":"https://mcp.example/","headers":[{"name":"Authorization","value":"[scrubbed]","_meta":"[scrubbed]"}]}`

func request(method, servers string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{"cwd":"/w","mcpServers":[` + servers + `]}}`
}

func TestASR712_Scrub(t *testing.T) {
	cases := []struct {
		name, in, want string // want "" means unchanged
	}{
		{"session/new", request("session/new", stdioServer+","+httpServer), request("session/new", scrubbedStdio+","+scrubbedHTTP)},
		{"session/resume", request("session/resume", stdioServer), request("session/resume", scrubbedStdio)},
		{"session/fork", request("session/fork", httpServer), request("session/fork", scrubbedHTTP)},
		{"v1 session/load", request("session/load", stdioServer), request("session/load", scrubbedStdio)},
		{"vendor method", request("_acme/session/new", stdioServer), request("_acme/session/new", scrubbedStdio)},
		{"batch", `[{"jsonrpc":"2.0","method":"x"},` + request("session/new", stdioServer) + `]`,
			`[{"jsonrpc":"2.0","method":"x"},` + request("session/new", scrubbedStdio) + `]`},
		{"escaped key", `{"method":"session/new","params":{"mcp\u0053ervers":[` + stdioServer + `]}}`,
			`{"method":"session/new","params":{"mcpServers":[` + scrubbedStdio + `]}}`},
		{"escaped method", `{"method":"session\/new","params":{"mcpServers":[` + stdioServer + `]}}`,
			`{"method":"session\/new","params":{"mcpServers":[` + scrubbedStdio + `]}}`},
		{"map forms", `{"method":"session/new","params":{"mcpServers":{"fs":{"args":"SECRET","env":{"K":"SECRET","N":null}}}}}`,
			`{"method":"session/new","params":{"mcpServers":{"fs":{"args":"[scrubbed]","env":{"K":"[scrubbed]","N":null}}}}}`},
		{"whitespace", "{ \"method\" : \"session/new\" , \"params\" : { \"mcpServers\" : [ " + stdioServer + " ] } }",
			`{"method":"session/new","params":{"mcpServers":[` + scrubbedStdio + `]}}`},
		{"not JSON", `{"method":"session/new","params":{"mcpServers":[{"env":"SECRET"`,
			`{"method":"session/new","params":{"mcpServers [scrubbed: not fully parsed]`},
		{"empty servers", request("session/new", ""), ""},
		{"response", `{"jsonrpc":"2.0","id":1,"result":{"mcpServers":[` + stdioServer + `]}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"mcpServers":[` + scrubbedStdio + `]}}`},
		{"prompt text", `{"method":"session/prompt","params":{"prompt":[{"type":"text","text":"what are mcpServers?"}]}}`, ""},
		{"escape, no servers", `{"method":"session/prompt","params":{"text":"caf\u00e9"}}`, ""},
		{"plain", `{"jsonrpc":"2.0","method":"session/update"}`, ""},
		{"string value", `"mcpServers"`, ""},
		{"garbage", "\xff\xfe mcpServers \x00", "\xff\xfe mcpServers [scrubbed: not fully parsed]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := []byte(c.in)
			orig := bytes.Clone(in)
			got, changed := Scrub(in)
			if !bytes.Equal(in, orig) {
				t.Fatal("Scrub modified its input")
			}
			want := c.want
			if want == "" {
				want = c.in
			}
			if changed != (c.want != "") {
				t.Errorf("changed = %v", changed)
			}
			if diff := cmp.Diff(want, string(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if c.want != "" && strings.Contains(string(got), "SECRET") {
				t.Errorf("secret survived: %s", got)
			}
		})
	}
}

func TestASR712_ScrubSkipsOtherLinesWithoutCopying(t *testing.T) {
	in := []byte(`{"jsonrpc":"2.0","method":"session/prompt","params":{"x":"` + strings.Repeat("y", 1<<20) + `"}}`)
	got, changed := Scrub(in)
	if changed || &got[0] != &in[0] {
		t.Error("a line without mcpServers was not returned as is")
	}
}

func TestASR712_SecretsNeverInWireLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.jsonl")
	w, err := Create(path, Header{Connection: "c"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"session/new", "session/resume", "session/fork", "session/load"} {
		line := []byte(request(m, stdioServer+","+httpServer))
		if _, err := w.Append(Entry{Type: TypeFrame, Dir: sdk.C2A, Line: line}); err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(line, []byte("SECRET-ENV")) {
			t.Fatal("Append modified the caller's bytes")
		}
	}
	batch := `[` + request("session/new", stdioServer) + `]`
	w.Append(Entry{Type: TypeFrame, Dir: sdk.C2A, Line: []byte(batch), NoLF: true})
	w.Close()
	raw, _ := os.ReadFile(path)
	for _, secret := range []string{"SECRET-ARG", "SECRET-ENV", "SECRET-HDR", "SECRET-META"} {
		if bytes.Contains(raw, []byte(secret)) {
			t.Errorf("%s found in the wire log", secret)
		}
	}
	for _, keep := range []string{"API_KEY", "Authorization", "/bin/mcp-fs", "https://mcp.example/"} {
		if !bytes.Contains(raw, []byte(keep)) {
			t.Errorf("%s missing from the wire log", keep)
		}
	}
}

func FuzzScrub(f *testing.F) {
	f.Add([]byte(request("session/new", stdioServer+","+httpServer)))
	f.Add([]byte(`[` + request("session/fork", httpServer) + `,1,null]`))
	f.Add([]byte(`{"method":"session/new","params":{"mcp\u0053ervers":{"a":[1,{"env":[[]]}]}}}`))
	f.Add([]byte(`{"method":"session/new","params":{"mcpServers":[{"args":{"a":"b"}},"x",null]}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		orig := bytes.Clone(in)
		out, changed := Scrub(in)
		if !bytes.Equal(in, orig) {
			t.Fatal("input modified")
		}
		if !changed && !bytes.Equal(out, in) {
			t.Fatal("unchanged but different bytes")
		}
		if json.Valid(in) && !json.Valid(out) && !bytes.HasSuffix(out, []byte(scrubbedCut)) {
			t.Fatalf("valid input %q gave invalid output %q", in, out)
		}
		again, _ := Scrub(out)
		if !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: %q → %q", out, again)
		}
	})
}

// indexFold finds what the plain bytes.EqualFold search finds, for the
// scrubber's keys, in text with case variants, near misses, multi-byte
// runes that fold to ASCII (ſ, K) and invalid bytes.
func TestIndexFoldMatchesEqualFold(t *testing.T) {
	ref := func(b, sub []byte) int {
		for i := 0; i+len(sub) <= len(b); i++ {
			if bytes.EqualFold(b[i:i+len(sub)], sub) {
				return i
			}
		}
		return -1
	}
	pieces := []string{"mcpServers", "MCPSERVERS", "mcpſervers", "mcpServer", "cpServers", "_meta", "_META", "_mEtA", "_met",
		"meta", "_", "m", "v", "V", "\xff", "K", "é", `"`, " ", "x", "mcpServ", "ers", "_me", "ta"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b []byte
		for range rng.IntN(8) {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
		for _, key := range [][]byte{keyMcpServers, keyMeta} {
			if got, want := indexFold(b, key), ref(b, key); got != want {
				t.Fatalf("indexFold(%q, %q) = %d, want %d", b, key, got, want)
			}
		}
	}
}

// TestMayHoldKeySharedEscapeSearch: the \u search Scrub makes once for both keys answers
// as a search made afresh for each would, wherever the line's \u escapes are (before,
// inside or after a spelling of a key, or none), for the second key as for the first.
func TestMayHoldKeySharedEscapeSearch(t *testing.T) {
	fresh := func(b, key []byte) bool {
		esc := notSearched
		return mayHoldKey(b, key, &esc)
	}
	pieces := []string{`"`, `\u`, `\u005f`, `\u006d`, `meta`, `mcp`, `Servers`, `_`, `_meta`, `"mcp\u0053ervers"`,
		`"\u005fmeta"`, `x`, `\"`, `\\u`, " ", `"_m\u0065ta":1`, "\xff"}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		var b []byte
		for range rng.IntN(9) {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
		for _, keys := range [][2][]byte{{keyMcpServers, keyMeta}, {keyMeta, keyMcpServers}} {
			esc := notSearched
			for _, key := range keys {
				if got, want := mayHoldKey(b, key, &esc), fresh(b, key); got != want {
					t.Fatalf("mayHoldKey(%q, %q) after %q = %v, want %v", b, key, keys[0], got, want)
				}
			}
		}
	}
}
