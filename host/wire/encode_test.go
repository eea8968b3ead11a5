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

// appendJSONStringByByte is the escaper before jsonscan.EscapeMask, byte by byte: the oracle of
// FuzzAppendStringSameAsByByte and the baseline of BenchmarkEscapeLine.
func appendJSONStringByByte(dst, s []byte, check bool) (_ []byte, ok bool) {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && class[s[j]] == 0 {
			j++
		}
		dst = append(dst, s[i:j]...)
		if j == len(s) {
			break
		}
		c := s[j]
		switch class[c] {
		case 2:
			if !check {
				dst = append(dst, c)
				i = j + 1
				continue
			}
			r, n := utf8.DecodeRune(s[j:])
			if r == utf8.RuneError && n == 1 {
				return dst, false
			}
			dst = append(dst, s[j:j+n]...)
			i = j + n
			continue
		case 1:
			e := c
			switch c {
			case '\n':
				e = 'n'
			case '\r':
				e = 'r'
			case '\t':
				e = 't'
			}
			dst = append(dst, '\\', e)
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i = j + 1
	}
	return append(dst, '"'), true
}

// FuzzAppendStringSameAsByByte: the word-at-a-time escaper gives the same bytes and the
// same verdict on UTF-8 as the byte-by-byte one, for any input, wherever the special bytes
// fall in a word and whatever room dst has.
func FuzzAppendStringSameAsByByte(f *testing.F) {
	for _, s := range []string{"", "plain text of some length", `{"a":"b\\c"}`, "\x00\x1f\x20\x7f\x80\xff",
		"ünïcødé ✓ 😀", "abcdefg\"", "abcdefgh\\", "\xc3", "abcdefgh\xe2\x9c", " !#$%&'()*+,-./0123456789:;<=>?@[]^_`{|}~",
		strings.Repeat("\x01", 40), strings.Repeat(`"`, 33)} {
		f.Add([]byte(s), uint8(0))
	}
	f.Fuzz(func(t *testing.T, b []byte, room uint8) {
		for _, check := range []bool{false, true} {
			if !check && !utf8.Valid(b) {
				continue
			}
			dst := make([]byte, 1, 1+int(room))
			got, gok := appendJSONString(dst, b, check)
			want, wok := appendJSONStringByByte([]byte{0}, b, check)
			if gok != wok || string(got) != string(want) {
				t.Fatalf("check=%v %q: got %q %v, want %q %v", check, b, got, gok, want, wok)
			}
			if check && gok != utf8.Valid(b) {
				t.Fatalf("%q: ok %v, utf8.Valid %v", b, gok, !gok)
			}
		}
	})
}

// BenchmarkEscapeLine escapes recorded-shape ACP lines as capture does (checking UTF-8),
// against the byte-by-byte escaper in the same run: a message chunk (mostly structure), a
// tool result holding code (text with newlines and quotes), a long prose chunk.
func BenchmarkEscapeLine(b *testing.B) {
	lines := map[string][]byte{
		"chunk": []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_7f3a9c1e5b2d4f60","update":{"sessionUpdate":"agent_message_chunk","messageId":"msg-000000000","content":{"type":"text","text":"and never a entries batch func ` + "`store.go`" + ` disk (w per entries naïve frames entries dispatch."}}}}`),
		"code":  []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_7f3a9c1e5b2d4f60","update":{"sessionUpdate":"tool_call_update","toolCallId":"call_0001","status":"completed","content":[{"type":"content","content":{"type":"text","text":"` + strings.Repeat(`package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello, world\")\n}\n`, 20) + `"}}]}}}`),
		"prose": []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + strings.Repeat("The plugin maps each frame in one pass, and the host writes what it returns to the store. ", 30) + `"}}}}`),
	}
	for _, name := range []string{"chunk", "code", "prose"} {
		l := lines[name]
		for _, impl := range []struct {
			name string
			f    func(dst, s []byte, check bool) ([]byte, bool)
		}{{"word", appendJSONString}, {"byte-by-byte-baseline", appendJSONStringByByte}} {
			b.Run(name+"/"+impl.name, func(b *testing.B) {
				var buf []byte
				b.SetBytes(int64(len(l)))
				for b.Loop() {
					buf, _ = impl.f(buf[:0], l, true)
				}
			})
		}
	}
}

// TestTimeCacheSameAsAppendTime: the Writer's cache of the last time written gives
// appendTime's bytes for every time: the same instant in another zone or with a monotonic
// reading (one text), instants a nanosecond apart, the zero time, and back again.
func TestTimeCacheSameAsAppendTime(t *testing.T) {
	base := time.Date(2026, 10, 26, 14, 30, 41, 207000000, time.UTC)
	times := []time.Time{
		base, base, base.In(time.FixedZone("X", 3*3600)), base.Add(time.Nanosecond), base,
		time.Now(), time.Now().Round(0), {}, base.Add(time.Second), base.Add(time.Second),
	}
	var c timeCache
	for i, at := range times {
		got := string(c.append([]byte("x"), at))
		if want := "x" + string(appendTime(nil, at)); got != want {
			t.Errorf("time %d (%v): cached %q, want %q", i, at, got, want)
		}
	}
	var none *timeCache // appendEntry's: no cache
	if got, want := string(none.append(nil, base)), string(appendTime(nil, base)); got != want {
		t.Errorf("no cache: %q, want %q", got, want)
	}
}

// TestAppendStringEveryPlace: the word-at-a-time escaper gives the byte-by-byte escaper's
// bytes for text ended by each kind of byte (a quote, a backslash, a control byte, a
// multi-byte rune, an invalid byte), at every place in a word and after every lead,
// whatever room dst has; quotes and backslashes in runs of every length too (the
// in-place escape of a word: up to eight backslashes added to it).
func TestAppendStringEveryPlace(t *testing.T) {
	text := []byte("The plugin maps each frame in one pass, and the host writes what it returns. ")
	for _, end := range []string{`"`, `\`, "\n", "\x01", "é", "\xff", "", `"\"\`, `\\\\\\\\\`, `a"b"c"d"`, `""""""""""`} {
		for lead := range 9 {
			for n := 0; n <= len(text); n++ {
				b := append(append(append([]byte(`{"ab":12`)[:lead], text[:n]...), end...), text[:n/2]...)
				for _, room := range []int{0, 7, 31, 200} {
					for _, check := range []bool{false, true} {
						if !check && !utf8.Valid(b) {
							continue
						}
						got, gok := appendJSONString(make([]byte, 1, 1+room), b, check)
						want, wok := appendJSONStringByByte([]byte{0}, b, check)
						if gok != wok || string(got) != string(want) {
							t.Fatalf("check=%v room=%d %q: got %q %v, want %q %v", check, room, b, got, gok, want, wok)
						}
					}
				}
			}
		}
	}
}
