package aep

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
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
		out = rawSeparators(out)
	}
	b.Write(out)
}

// TestWriteStringIsJSON: whatever the string holds — the separators U+2028 and U+2029, or
// the text of their escapes after a backslash or not — writeString writes a JSON string
// that reads back as it, with the separators raw. (A replacement of the text `\u2028`
// wherever it appeared turned an escaped backslash followed by "u2028" into invalid JSON.)
func TestWriteStringIsJSON(t *testing.T) {
	for _, s := range []string{"x\u2028y", `x\u2028y`, `x\\u2028y`, `\u2029`, "\u2028\u2029", `a\u2028` + "\u2028", `\\\u2028`, `\u202`} {
		var b bytes.Buffer
		writeString(&b, s)
		var got string
		if err := json.Unmarshal(b.Bytes(), &got); err != nil || got != s {
			t.Errorf("writeString(%q) = %s: reads back %q, %v", s, b.Bytes(), got, err)
		}
		if bytes.Contains(b.Bytes(), []byte(`\u2028`)) && strings.Contains(s, "\u2028") && !strings.Contains(s, `\u2028`) {
			t.Errorf("writeString(%q) = %s: U+2028 escaped", s, b.Bytes())
		}
	}
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

// compareUTF16Runes is compareUTF16 without its ASCII shortcut.
func compareUTF16Runes(a, b string) int {
	if a == b {
		return 0
	}
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

// TestCompareUTF16Shortcut: the ASCII shortcut orders as UTF-16 code units do.
func TestCompareUTF16Shortcut(t *testing.T) {
	parts := []string{"", "a", "A", "z", "_", "~", "\x00", "\x7f", "é", "\uffff", "𝄞", "\xff", "ab", "a_b"}
	r := rand.New(rand.NewPCG(1, 9))
	for range 20000 {
		var x, y strings.Builder
		for range r.IntN(4) {
			x.WriteString(parts[r.IntN(len(parts))])
		}
		for range r.IntN(4) {
			y.WriteString(parts[r.IntN(len(parts))])
		}
		if got, want := compareUTF16(x.String(), y.String()), compareUTF16Runes(x.String(), y.String()); got != want {
			t.Fatalf("compareUTF16(%q, %q) = %d, want %d", x.String(), y.String(), got, want)
		}
	}
}

// TestTimeWrittenAsFormatted: the envelope's time is Format(TimeFormat), quoted.
func TestTimeWrittenAsFormatted(t *testing.T) {
	for _, tm := range []time.Time{time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC), time.Date(1, 1, 1, 0, 0, 0, 1, time.FixedZone("x", 3600)),
		time.Date(12345, 12, 31, 23, 59, 59, 999_999_999, time.UTC), time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC)} {
		b, err := (&Event{Time: tm}).MarshalJSON()
		var want bytes.Buffer
		writeString(&want, tm.UTC().Format(TimeFormat))
		if err != nil || !bytes.Contains(b, []byte(`,"time":`+want.String()+`,`)) && !bytes.HasSuffix(b, []byte(`,"time":`+want.String()+`,"capture":"none"}`)) {
			t.Errorf("%v: %s, %v (want time %s)", tm, b, err, want.String())
		}
	}
}

// TestDerivedULIDHashesTheParts: the id's entropy is the SHA-256 of the
// parts, each followed by a NUL, however long they are.
func TestDerivedULIDHashesTheParts(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	for _, parts := range [][]string{nil, {""}, {"c", "1", "0", "0", "x.acp.a.b"}, {strings.Repeat("p", 300), "q"}} {
		h := sha256.New()
		for _, p := range parts {
			h.Write([]byte(p))
			h.Write([]byte{0})
		}
		var e [10]byte
		copy(e[:], h.Sum(nil))
		if got, want := DerivedULID(at, parts...), ULID(uint64(at.UnixMilli()), e); got != want {
			t.Errorf("DerivedULID(%q) = %s, want %s", parts, got, want)
		}
	}
}
