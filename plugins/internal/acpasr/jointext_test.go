package acpasr

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/acptap/acptap/internal/jsonscan"
	"github.com/acptap/acptap/sdk/asr"
)

// Chunks joined escaped (asr.AppendText, escapedTextPart) give the block
// that decoding each chunk, joining the texts and writing the part
// (textPart) gives: escapes of every kind, split surrogate pairs, invalid
// UTF-8, U+2028, HTML characters.
func TestJoinedTextSameAsDecoded(t *testing.T) {
	pieces := []string{`a`, `é`, `\u00e9`, `\n`, `\t`, `\/`, `\"`, `\\`, `\u0001`, `\u001F`, `\ud83d`, `\ude00`, `\ud83d\ude00`,
		"\xff", "\xe2\x82", "\u2028", `\u2028`, `<>&`, `\u003c`, `\b\f\r`, "\x7f", `\uFFFD`, "日本", `word `}
	rng := rand.New(rand.NewPCG(9, 10))
	for range 20000 {
		var chunks [][]byte
		for range 1 + rng.IntN(5) {
			c := []byte{'"'}
			for range rng.IntN(6) {
				c = append(c, pieces[rng.IntN(len(pieces))]...)
			}
			chunks = append(chunks, append(c, '"'))
		}
		var text, esc []byte
		for _, c := range chunks {
			var ok1, ok2 bool
			text, ok1 = jsonscan.AppendString(text, c)
			esc, ok2 = asr.AppendText(esc, c)
			if !ok1 || !ok2 {
				t.Fatalf("%q: AppendString %v, AppendText %v", c, ok1, ok2)
			}
		}
		want, got := textPart("text", string(text)), escapedTextPart("text", esc)
		if !bytes.Equal(got, want) {
			t.Fatalf("chunks %q:\njoined escaped %s\ndecoded        %s", chunks, got, want)
		}
	}
}
