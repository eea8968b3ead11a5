package wire

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestAppendStringRoundTrip(t *testing.T) {
	cases := []string{
		"", "plain", `quote " and \ backslash`, "nl\nnr\rtab\t", "\x00\x01\x1f\x7f",
		"\b\f", "ünïcødé ✓ 😀", "\u2028\u2029", "</script>&", strings.Repeat("ab\"", 1000),
	}
	for _, s := range cases {
		enc := appendString(nil, []byte(s))
		if !json.Valid(enc) {
			t.Fatalf("appendString(%q) = %s: not valid JSON", s, enc)
		}
		var got string
		if err := json.Unmarshal(enc, &got); err != nil || got != s {
			t.Errorf("round trip of %q: got %q, err %v", s, got, err)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add([]byte("hello \"world\"\n"))
	f.Add([]byte{0, 1, 2, 0x7f, 0xc3, 0xbc})
	f.Fuzz(func(t *testing.T, b []byte) {
		if !utf8.Valid(b) {
			return
		}
		enc := appendString(nil, b)
		var got string
		if err := json.Unmarshal(enc, &got); err != nil {
			t.Fatalf("unmarshal %s: %v", enc, err)
		}
		if got != string(b) {
			t.Fatalf("round trip: got %q, want %q", got, b)
		}
	})
}

func TestAppendTimeKeepsNanoseconds(t *testing.T) {
	loc := time.FixedZone("X", 3*3600)
	for _, in := range []time.Time{
		time.Date(2026, 10, 26, 14, 30, 41, 207000000, time.UTC),
		time.Date(2026, 10, 26, 14, 30, 41, 207000001, loc),
		time.Date(2026, 10, 26, 14, 30, 41, 0, time.UTC),
	} {
		s := string(appendTime(nil, in))
		if !strings.HasSuffix(s, "Z") {
			t.Errorf("%s: not UTC", s)
		}
		got, err := time.Parse(time.RFC3339Nano, s)
		if err != nil || !got.Equal(in) {
			t.Errorf("time %v → %s → %v (err %v)", in, s, got, err)
		}
	}
}

// BenchmarkAppendString measures the hand-rolled escaper against
// encoding/json (the baseline, measured in the same run) on 1 MiB lines: one
// dense with quotes like a JSON-RPC line, one mostly plain text like a file
// read. Compare each wire sub-benchmark's ns/op with its baseline.
func BenchmarkAppendString(b *testing.B) {
	lines := map[string][]byte{
		"jsonrpc": []byte(strings.Repeat(`{"jsonrpc":"2.0","text":"a line\twith \"quotes\" ✓"}`, 1<<14)),
		"text":    []byte(strings.Repeat("func main() {\n\tfmt.Println(\"hello, world\") // a comment of some length\n}\n", 1<<13)),
	}
	for name, line := range lines {
		b.Run(name+"/wire", func(b *testing.B) {
			var buf []byte
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				buf = appendString(buf[:0], line)
			}
		})
		b.Run(name+"/encoding-json-baseline", func(b *testing.B) {
			s := string(line)
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				if _, err := json.Marshal(s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
