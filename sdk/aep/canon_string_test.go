package aep

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// writeStringEncoder is writeString without its printable-ASCII shortcut:
// every string through the encoder.
func writeStringEncoder(b *bytes.Buffer, s string) {
	var e bytes.Buffer
	enc := json.NewEncoder(&e)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	out := bytes.TrimSuffix(e.Bytes(), []byte("\n"))
	if bytes.Contains(out, []byte(`\u202`)) {
		out = []byte(strings.NewReplacer(`\u2028`, "\u2028", `\u2029`, "\u2029").Replace(string(out)))
	}
	b.Write(out)
}

func checkWriteString(t *testing.T, s string) {
	var a, b bytes.Buffer
	writeString(&a, s)
	writeStringEncoder(&b, s)
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatalf("writeString(%q) = %s, the encoder writes %s", s, a.Bytes(), b.Bytes())
	}
}

// TestWriteStringShortcut: the shortcut writes what the encoder writes.
func TestWriteStringShortcut(t *testing.T) {
	parts := []string{"a", "Z", " ", "~", "\x7f", "\"", "\\", "\n", "\x00", "\x1f", "<", ">", "&", "é", "\u2028", "\u2029",
		`\u2028`, "\xff", "\xe2\x80", "🙂", "/", "{}"}
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		var sb strings.Builder
		for range r.IntN(12) {
			sb.WriteString(parts[r.IntN(len(parts))])
		}
		checkWriteString(t, sb.String())
	}
	for c := range 256 {
		checkWriteString(t, "x"+string([]byte{byte(c)})+"y")
	}
}

func FuzzWriteString(f *testing.F) {
	f.Add("plain text")
	f.Add("tab\there \"q\" \u2028 <&>")
	f.Fuzz(func(t *testing.T, s string) { checkWriteString(t, s) })
}
