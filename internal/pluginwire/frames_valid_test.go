package pluginwire

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"testing"
)

var validSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"hi \"x\" \u00e9 \ud83d\ude00"}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn","n":-1.5e+3,"t":true,"f":false,"z":null,"a":[1,2,{}]}}`,
	`{ "jsonrpc" : "2.0", "id" : 1 }`, `{"id":1}  `, "{\"id\":1,\n\"x\":[]}", `{"id":01}`, `{"id":1,}`, `{"id":"\x01"}`,
	`{"id":"a\\"}`, `{"id":"\u12"}`, `{"id":1}{}`, `{"id":[1,2]`, `{"id":1e}`, `{"id":-}`, "{\"id\":\"\xff\xfe\"}",
	`{"a":{"b":{"c":{"d":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}}}}`, `[]`, `"id"`, `1`, ``,
}

// TestFrameBuilderValid: valid answers as json.Valid, on lines peers write,
// damaged ones (every byte replaced, dropped, or doubled) and random bytes.
func TestFrameBuilderValid(t *testing.T) {
	check := func(b []byte) {
		if got, want := valid(b), json.Valid(b); got != want {
			t.Fatalf("valid(%q) = %v, json.Valid %v", b, got, want)
		}
	}
	rng := rand.New(rand.NewSource(1))
	alphabet := []byte("{}[]:,\"\\ \n\tu0123456789abcdefE.+-tnrulsx\x00\x1f\x7f\xc3\xa9\xff")
	for _, s := range validSeeds {
		b := []byte(s)
		check(b)
		for i := range b {
			check(append(append([]byte{}, b[:i]...), b[i+1:]...)) // dropped
			check(append(append([]byte{}, b[:i+1]...), b[i:]...)) // doubled
			for k := 0; k < 4; k++ {
				m := append([]byte{}, b...)
				m[i] = alphabet[rng.Intn(len(alphabet))]
				check(m)
			}
		}
	}
	for range 20000 {
		n := rng.Intn(24)
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.Intn(len(alphabet))]
		}
		check(b)
	}
}

func FuzzFrameBuilderValid(f *testing.F) {
	for _, s := range validSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := valid(b), json.Valid(b); got != want {
			t.Fatalf("valid(%q) = %v, json.Valid %v", b, got, want)
		}
	})
}

// BenchmarkFrameBuilderValid: valid against json.Valid on a request line.
func BenchmarkFrameBuilderValid(b *testing.B) {
	line := []byte(validSeeds[0])
	for _, c := range []struct {
		name string
		fn   func([]byte) bool
	}{{"json.Valid", json.Valid}, {"valid", valid}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				c.fn(line)
			}
		})
	}
}

// TestHasIDKey: hasIDKey answers as bytes.Contains(b, keyID), on the seed
// lines, on lines with the key's tail alone or at either end, and on random
// bytes of the key's letters.
func TestHasIDKey(t *testing.T) {
	check := func(b []byte) {
		if got, want := hasIDKey(b), bytes.Contains(b, keyID); got != want {
			t.Fatalf("hasIDKey(%q) = %v, bytes.Contains %v", b, got, want)
		}
	}
	for _, s := range append(validSeeds, `id"`, `"id"`, `x"id"`, `"id`, `id""id"`, `iid"d"`, `"iid"`, `"i"id"`,
		`{"text":"said" "id"}`, `{"sessionId":"s","paid":"x"}`) {
		check([]byte(s))
	}
	rng := rand.New(rand.NewSource(2))
	alphabet := []byte(`"id x`)
	for range 50000 {
		b := make([]byte, rng.Intn(12))
		for i := range b {
			b[i] = alphabet[rng.Intn(len(alphabet))]
		}
		check(b)
	}
}
