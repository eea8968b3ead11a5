package wire

import (
	"bytes"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/acptap/acptap/sdk"
)

// fastCases are frame lines the fast path must decode as encoding/json
// does, or leave to it: the Writer's own lines and near misses.
func fastCases(t testing.TB) [][]byte {
	var lines [][]byte
	at := time.Date(2026, 12, 1, 12, 0, 0, 123456789, time.UTC)
	for i, l := range []string{
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"text":"a\"b\\c\n\t\r\u0001 é 日本 🎉"}}}`,
		``, `x`, "\x7f", "tab\there", `quote"`, `\u00e9 literal`, "\u2028\u2029", "\uFFFD ok",
	} {
		for _, dir := range []sdk.Direction{sdk.A2C, sdk.C2A} {
			for _, e := range []Entry{
				{Type: TypeFrame, Seq: uint64(i + 1), At: at, Dir: dir, Line: []byte(l)},
				{Type: TypeFrame, Seq: 18446744073709551615, Dir: dir, Line: []byte(l), NoLF: true},
				{Type: TypeFrame, Seq: 7, At: at.Truncate(time.Second), Dir: dir, Line: []byte(l)},
				{Type: TypeFrame, Seq: 7, At: at.Truncate(time.Millisecond).Add(10 * time.Millisecond), Dir: dir, Line: []byte(l)},
			} {
				b, err := appendEntry(nil, &e)
				if err != nil {
					t.Fatal(err)
				}
				lines = append(lines, b[:len(b)-1])
			}
		}
	}
	base := `{"type":"frame","seq":3,"at":"2026-12-01T12:00:00.5Z","dir":"a2c","line":"hello"}`
	for _, m := range [][2]string{
		{`"seq":3`, `"seq":03`}, {`"seq":3`, `"seq":-3`}, {`"seq":3`, `"seq":3.0`}, {`"seq":3`, `"seq":99999999999999999999`},
		{`.5Z`, `.50Z`}, {`.5Z`, `Z`}, {`.5Z`, `.Z`}, {`.5Z`, `.1234567891Z`}, {`.5Z`, `+00:00`},
		{`12-01`, `02-30`}, {`12-01`, `02-29`}, {`2026-12`, `2024-02`}, {`2026-12-01T12`, `2024-02-29T24`}, {`12:00:00`, `12:60:00`}, {`12:00:00`, `12:00:60`},
		{`hello`, `he\u0000llo`}, {`hello`, `he\u00e9llo`}, {`hello`, `he\ud83c\udf89llo`}, {`hello`, `he\/llo`}, {`hello`, `he\bllo`},
		{`hello`, `he\x`}, {`hello`, "he\x01llo"}, {`hello`, "he\xffllo"}, {`hello`, "he\xed\xa0\x80llo"}, {`hello`, `he\`},
		{`"}`, `","nolf":true}`}, {`"}`, `","nolf":false}`}, {`"}`, `"} `}, {`"}`, `","x":1}`}, {`"}`, `","line":"x"}`},
		{`"a2c"`, `"A2C"`}, {`"a2c"`, `"a2cx"`}, {`"dir"`, `"Dir"`}, {`{"type"`, `{ "type"`}, {`"frame"`, `"gap"`},
		{`"line":"hello"`, `"b64":"aGVsbG8="`}, {`,"at":"2026-12-01T12:00:00.5Z"`, ``},
	} {
		lines = append(lines, []byte(strings.Replace(base, m[0], m[1], 1)))
	}
	return lines
}

// The fast path answers exactly as encoding/json, or leaves the line to it.
func TestFastDecodeMatches(t *testing.T) {
	taken := 0
	for _, l := range fastCases(t) {
		if checkFast(t, l) {
			taken++
		}
	}
	if taken < 60 {
		t.Errorf("the fast path took %d lines; the Writer's own lines must all take it", taken)
	}
}

func checkFast(t testing.TB, line []byte) bool {
	fast, ok := fastDecodeFrame(line, &lineSlab{})
	if !ok {
		return false
	}
	slow, err := decodeEntryJSON(line)
	if err != nil {
		t.Fatalf("%q: fast path decoded it, encoding/json says %v", line, err)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%q:\nfast %#v\nslow %#v", line, fast, slow)
	}
	return true
}

func FuzzFastDecode(f *testing.F) {
	for _, l := range fastCases(f) {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line []byte) { checkFast(t, line) })
}

// The word-at-a-time scan of the line's plain bytes: lines with a byte
// that needs a look at every offset of a word, of every length around the
// word's size, decode as encoding/json decodes them, and every line the
// Writer writes takes the fast path.
func TestFastDecodeWordBoundaries(t *testing.T) {
	specials := []string{`"`, `\`, "\n", "\t", "\x01", "é", "日", "🎉", "\u2028", "\xff", "/", "\x7f"}
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 40; n++ {
		for at := 0; at <= n; at++ {
			for _, sp := range specials {
				for range 3 {
					b := make([]byte, 0, n+8)
					for i := 0; i < n; i++ {
						if i == at {
							b = append(b, sp...)
						}
						b = append(b, byte('a'+r.IntN(26)))
					}
					if r.IntN(4) == 0 {
						b = append(b, specials[r.IntN(len(specials))]...)
					}
					e := Entry{Type: TypeFrame, Seq: 9, Dir: sdk.A2C, Line: b}
					line, err := appendEntry(nil, &e)
					if err != nil {
						t.Fatal(err)
					}
					line = line[:len(line)-1]
					if !checkFast(t, line) && utf8.Valid(b) && bytes.HasPrefix(line, fastFrameHead) {
						t.Fatalf("%q: the Writer's line does not take the fast path", line)
					}
				}
			}
		}
	}
}

// BenchmarkFastDecode decodes the frame entries of ACPTAP_BENCH_WIRE (a
// wire log; skipped without one) with fastDecodeFrame, into reused memory
// as the planning scan does.
//
//	ACPTAP_BENCH_WIRE=/path/to/wire.jsonl go test -run '^$' -bench FastDecode ./host/wire/
func BenchmarkFastDecode(b *testing.B) {
	path := os.Getenv("ACPTAP_BENCH_WIRE")
	if path == "" {
		b.Skip("ACPTAP_BENCH_WIRE names no wire log")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	b.SetBytes(int64(len(data)))
	slab := &lineSlab{reuse: true}
	for b.Loop() {
		for _, l := range lines {
			fastDecodeFrame(l, slab)
		}
	}
}

// TestParseAtSameSecond: a reader's times of the second before are taken
// from that second plus their fraction, and each is the time parseUTC
// gives, to the struct (==), as are the answers for fractions the writer
// does not write. Without the reuse no time is taken so (sameSec).
func TestParseAtSameSecond(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var texts []string
	for range 300 {
		base := time.Date(1970+r.IntN(200), time.Month(1+r.IntN(12)), 1+r.IntN(31), r.IntN(24), r.IntN(60), r.IntN(60), 0, time.UTC)
		for range 1 + r.IntN(4) {
			at := base.Add(time.Duration(r.IntN(1e9)))
			if r.IntN(5) == 0 {
				at = at.Truncate(time.Millisecond)
			}
			texts = append(texts, string(appendTime(nil, at)))
		}
		s := string(appendTime(nil, base))
		for _, bad := range []string{".50Z", ".Z", ".1234567891Z", ".12a4Z", "Z", "+00:00", ".5"} {
			if r.IntN(3) == 0 {
				texts = append(texts, s[:19]+bad)
			}
		}
	}
	var slab lineSlab
	for _, text := range texts {
		want, wok := parseUTC([]byte(text))
		got, ok := slab.parseAt([]byte(text))
		if ok != wok || got != want {
			t.Fatalf("%s: parseAt %v %v, parseUTC %v %v", text, got, ok, want, wok)
		}
	}
	if slab.sameSec == 0 {
		t.Fatal("no time taken from the second before")
	}
}
