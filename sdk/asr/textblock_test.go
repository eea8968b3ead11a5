package asr

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/acptap/acptap/internal/jsonscan"
)

// TestTextBlockSameAsRaw: a TextBlock is the block encoding/json writes for
// the joined decoded texts, and a record holding its Bytes (which the
// encoders take from the ring of known blocks, without checking them) is
// encoded, fingerprinted and put in canonical form exactly as encoding/json
// and the line's canonical form give (sameAsReference), and as the same
// record holding a copy of the bytes (a plain json.RawMessage, checked);
// a block handed out keeps its bytes while the block grows after it (by
// appends and by Grow).
func TestTextBlockSameAsRaw(t *testing.T) {
	pieces := []string{`a`, `é`, `\u00e9`, `\n`, `\t`, `\/`, `\"`, `\\`, `\u0001`, `\ud83d`, `\ude00`, `\ud83d\ude00`,
		"\xff", "\xe2\x82", "\u2028", `\u2028`, `<>&`, `\u003c`, "\x7f", "日本", `word `, string(bytes.Repeat([]byte("x"), 150))}
	rng := rand.New(rand.NewPCG(21, 22))
	for range 3000 {
		var tb TextBlock
		var text []byte
		type handed struct {
			blk  json.RawMessage
			want string
		}
		var out []handed
		for range 1 + rng.IntN(8) {
			c := []byte{'"'}
			for range rng.IntN(5) {
				c = append(c, pieces[rng.IntN(len(pieces))]...)
			}
			c = append(c, '"')
			if rng.IntN(4) == 0 { // room made ahead (a caller's hint) changes nothing but the room
				tb.Grow(rng.IntN(3000))
			}
			var ok1 bool
			text, ok1 = jsonscan.AppendString(text, c)
			if ok2 := tb.Append(c); !ok1 || !ok2 {
				t.Fatalf("%s: AppendString %v, Append %v", c, ok1, ok2)
			}
			if rng.IntN(3) == 0 {
				want, err := marshalJSON(struct {
					Type string `json:"type"`
					Text string `json:"text"`
				}{"text", string(text)})
				if err != nil {
					t.Fatal(err)
				}
				blk := tb.Bytes()
				if tb.Len() != len(blk)-len(`{"type":"text","text":""}`) {
					t.Fatalf("Len %d for block %s", tb.Len(), blk)
				}
				if !bytes.Equal(blk, want) {
					t.Fatalf("block %s\nwant  %s", blk, want)
				}
				out = append(out, handed{blk, string(want)})
				rec := &Message{Envelope: Envelope{Type: TypeMessage, Seq: 3, ID: "r3"}, MessageID: "m",
					Content: []json.RawMessage{json.RawMessage(`{"type":"image","data":"AA=="}`), blk}}
				sameAsReference(t, rec)
				cp := *rec
				cp.Content = []json.RawMessage{rec.Content[0], bytes.Clone(blk)}
				a, _ := Marshal(rec)
				b, _ := Marshal(&cp)
				fa, _ := FingerprintOf(rec)
				fb, _ := FingerprintOf(&cp)
				if !bytes.Equal(a, b) || fa != fb {
					t.Fatalf("known block: line %s fp %x; as a plain RawMessage: line %s fp %x", a, fa, b, fb)
				}
			}
		}
		for _, h := range out {
			if string(h.blk) != h.want {
				t.Fatalf("a block handed out changed: %s, was %s", h.blk, h.want)
			}
		}
	}
	var empty TextBlock
	if got := string(empty.Bytes()); got != `{"type":"text","text":""}` {
		t.Fatalf("empty block %s", got)
	}
}
