package acpasr

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/acptap/acptap/internal/jsonscan"
	"github.com/acptap/acptap/sdk/asr"
)

// Chunks joined escaped (asr.TextBlock, as blocks joins them) give the block
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
		var text []byte
		var tb asr.TextBlock
		for _, c := range chunks {
			var ok1 bool
			text, ok1 = jsonscan.AppendString(text, c)
			if ok2 := tb.Append(c); !ok1 || !ok2 {
				t.Fatalf("%q: AppendString %v, TextBlock.Append %v", c, ok1, ok2)
			}
		}
		want, got := textPart("text", string(text)), tb.Bytes()
		if !bytes.Equal(got, want) {
			t.Fatalf("chunks %q:\njoined escaped %s\ndecoded        %s", chunks, got, want)
		}
	}
}

// A plain text block joined in place (blocks: the block closed after its
// text in the text's own array, copied before the next chunk when it was
// handed out) gives, at every point, the blocks the obvious way gives
// (decode each chunk, join, textPart), and a block handed out earlier
// keeps its bytes while more chunks are joined after it: snapshots
// (list) taken at random points are checked once every chunk is in.
func TestBlocksJoinInPlace(t *testing.T) {
	pieces := []string{`a`, `é`, `\n`, `\"`, `\\`, `\u0001`, `\ud83d\ude00`, "\xff", "\u2028", `<>&`, `word `,
		string(bytes.Repeat([]byte("x"), 700))}
	rng := rand.New(rand.NewPCG(11, 12))
	for range 3000 {
		var b blocks
		type snap struct {
			got  []json.RawMessage
			want []string
		}
		var snaps []snap
		var done []string // the reference's closed blocks
		var text []byte   // the reference's open text
		open := false
		var orig []byte // the open block's chunk while it is alone
		ref := func() []string {
			out := append([]string(nil), done...)
			if open && orig != nil {
				out = append(out, string(orig))
			} else if open {
				out = append(out, string(textPart("text", string(text))))
			}
			return out
		}
		for range 1 + rng.IntN(12) {
			switch rng.IntN(8) {
			case 0: // a block that is not plain text closes the open one
				x := json.RawMessage(`{"type":"image","data":"AA==","mimeType":"image/png"}`)
				b.chunk(x)
				if r := ref(); open {
					done = append(done, r[len(r)-1])
				}
				done, open, text, orig = append(done, string(x)), false, nil, nil
			case 1:
				snaps = append(snaps, snap{b.list(), ref()})
			default:
				c := []byte(`{"type":"text","text":"`)
				for range rng.IntN(4) {
					c = append(c, pieces[rng.IntN(len(pieces))]...)
				}
				c = append(c, `"}`...)
				o, _ := parseObj(c)
				v, _ := plainTextOf(o)
				if !open {
					text = nil
				}
				var ok bool
				if text, ok = jsonscan.AppendString(text, v); !ok {
					t.Fatalf("%s: not a string", v)
				}
				b.chunk(c)
				orig = nil
				if !open { // a block of one chunk, nothing joined to it: kept as received
					orig = c
				}
				open = true
			}
		}
		snaps = append(snaps, snap{b.list(), ref()})
		for i, s := range snaps {
			if len(s.got) != len(s.want) {
				t.Fatalf("snapshot %d: %d blocks, want %d", i, len(s.got), len(s.want))
			}
			for j := range s.got {
				if string(s.got[j]) != s.want[j] {
					t.Fatalf("snapshot %d block %d:\ngot  %s\nwant %s", i, j, s.got[j], s.want[j])
				}
			}
		}
	}
}
