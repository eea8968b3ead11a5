package asr

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/acptap/acptap/internal/jsonscan"
)

// referenceFingerprint is RecordFingerprint as it was first written: decode
// into maps with UseNumber, delete the identity members, encode again. The
// one-pass canonical form must give the same digest for every line.
func referenceFingerprint(line []byte, omit ...string) (Fingerprint, bool) {
	if !json.Valid(line) {
		return 0, false // the first version decoded the first value and ignored what followed
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) != nil || m == nil {
		return 0, false
	}
	for _, k := range append(append([]string(nil), identityFields...), omit...) {
		delete(m, k)
	}
	if n, ok := m["native"].(map[string]any); ok {
		delete(n, "ref")
		if len(n) == 0 {
			delete(m, "native")
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(m) != nil {
		return 0, false
	}
	sum := sha256.Sum256(b.Bytes())
	return Fingerprint(binary.BigEndian.Uint64(sum[:8])), true
}

// canonCases are lines whose canonical form has something to get right.
var canonCases = []string{
	`{}`,
	` { "b" : 1 , "a" : [ 1 , 2.50 , -0 , 1e3 , true , null ] } `,
	`{"type":"message","seq":3,"id":"r3","ts":"x","content":[{"type":"text","text":"hi"}],"native":{"ref":{"wire":"w","frames":[1]}}}`,
	`{"native":{"ref":{"wire":"w"},"record":{"z":1,"a":{"y":[],"b":{}}}}}`,
	`{"native":"not an object"}`,
	`{"native":{}}`,
	`{"a":1,"a":2,"b":{"c":1,"c":[3]}}`,
	`{"s":"quote \" backslash \\ slash \/ tab \t nl \n cr \r bs \b ff \f nul \u0000 esc \u001b del ` + "\x7f" + `"}`,
	`{"s":"html <>& \u003c\u003e\u0026 é \u00e9 ✓ \u2713 😀 \ud83d\ude00 line sep \u2028 para \u2029 raw ` + "\u2028\u2029" + `"}`,
	`{"s":"lone surrogate \ud800 and \udc00x","k\u00e9y":"v","":"empty key"}`,
	"{\"s\":\"invalid \xff\xfe utf8 \xc3\x28\",\"\xff\":1}",
	`{"z":{"y":{"x":{"w":[[[{"v":"deep"}]]]}}},"a":[{"b":2,"a":1},[]]}`,
	`{"n":[0,-1,1.5e-300,12345678901234567890123,0.000001,1E+2]}`,
}

func TestFingerprintMatchesReference(t *testing.T) {
	lines := append([]string(nil), canonCases...)
	// Every line of the repository's ASR fixtures and golden streams.
	for _, pattern := range []string{"../../plugins/internal/acpasr/testdata/*.jsonl", "../../plugins/*/testdata/*.jsonl", "../../docs/*.jsonl", "testdata/*.jsonl"} {
		files, _ := filepath.Glob(pattern)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range bytes.Split(b, []byte("\n")) {
				if len(bytes.TrimSpace(l)) > 0 {
					lines = append(lines, string(l))
				}
			}
		}
	}
	if len(lines) < 100 {
		t.Fatalf("only %d lines to compare: the fixtures moved?", len(lines))
	}
	for _, l := range lines {
		for _, omit := range [][]string{nil, {"messageId", "content"}} {
			want, ok := referenceFingerprint([]byte(l), omit...)
			got, err := RecordFingerprint([]byte(l), omit...)
			if !ok {
				if err == nil {
					t.Errorf("reference rejects, RecordFingerprint accepts: %s", l)
				}
				continue
			}
			if err != nil || got != want {
				t.Errorf("RecordFingerprint = %x, %v; reference %x\nline: %s\ncanonical: %s", got, err, want, l, canonical(nil, []byte(l), identityFields))
			}
		}
	}
}

func TestFingerprintRejects(t *testing.T) {
	for _, l := range []string{``, `null`, `[1]`, `"s"`, `{"a":}`, `{"a":1} x`, `{"a":1}{}`} {
		if _, err := RecordFingerprint([]byte(l)); err == nil {
			t.Errorf("RecordFingerprint(%q) accepted", l)
		}
	}
}

func FuzzFingerprint(f *testing.F) {
	for _, c := range canonCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		want, ok := referenceFingerprint(line)
		got, err := RecordFingerprint(line)
		switch {
		case !ok && err == nil:
			t.Fatalf("reference rejects, RecordFingerprint accepts: %q", line)
		case ok && (err != nil || got != want):
			t.Fatalf("RecordFingerprint = %x, %v; reference %x\nline: %q\ncanonical: %q", got, err, want, line, canonical(nil, line, identityFields))
		}
	})
}

func BenchmarkFingerprint(b *testing.B) {
	line := []byte(`{"type":"tool_result","seq":40,"id":"r40","ts":"2026-10-26T14:30:41.213Z","tsSource":"recorder","status":"completed","callId":"call_1_edit","linkage":"exact","displayContent":[{"type":"text","text":"Replaced \"Helo\" with \"Hello\" on line 6.\nAll good ✓"}],"raw":{"linesChanged":1,"files":["a.go","b.go"]},"native":{"ref":{"wire":"c-20261130T020639.099Z-1a2b3c4d.jsonl","frames":[15,20,21]}},"capture":{"content":{"state":"absent"}},"assembly":"folded"}`)
	b.Run("onepass", func(b *testing.B) {
		for b.Loop() {
			if _, err := RecordFingerprint(line); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reference", func(b *testing.B) {
		for b.Loop() {
			referenceFingerprint(line)
		}
	})
}

// canonString copies a string already in encodeString's form and writes
// any other again: the same bytes as decoding it and encoding the text.
func FuzzCanonString(f *testing.F) {
	for _, c := range []string{`"a"`, `"\"\\\/\b\f\n\r\t"`, `"\u0000\u001f\u001F\u0008\u000a\u0020"`, `"\u2028\u2029\u2027\ufffd"`,
		"\"\u2028\xff\"", `"é\u00e9"`, `"\ud83d\ude00"`, `"\u00"`, "\"\x7f<>&\""} {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, q []byte) {
		var s string
		if end, ok := jsonscan.StringEnd(q, 0); !ok || end != len(q) || q[0] != '"' || json.Unmarshal(q, &s) != nil {
			return // not one JSON string alone
		}
		want := encodeString(nil, s)
		if got := canonString(nil, q); !bytes.Equal(got, want) {
			t.Fatalf("canonString(%q) = %q; encodeString of its text %q", q, got, want)
		}
	})
}

func TestCanonStringEscapes(t *testing.T) {
	// Every two-byte and \u escape, alone and between text.
	for c := range 0x80 {
		for _, q := range []string{`"\` + string(rune(c)) + `"`, `"x\` + string(rune(c)) + `y"`} {
			check(t, q)
		}
	}
	for r := range 0x10000 {
		for _, hex := range []string{"%04x", "%04X"} {
			check(t, fmt.Sprintf(`"\u`+hex+`"`, r))
		}
	}
}

func check(t *testing.T, q string) {
	t.Helper()
	var s string
	if json.Unmarshal([]byte(q), &s) != nil {
		return
	}
	if got, want := canonString(nil, []byte(q)), encodeString(nil, s); !bytes.Equal(got, want) {
		t.Fatalf("canonString(%q) = %q; want %q", q, got, want)
	}
}

// AppendText appends what Marshal writes between the quotes for the
// string raw decodes to, and refuses what is not a JSON string.
func FuzzAppendText(f *testing.F) {
	for _, c := range []string{`"a"`, `"\"\\\/\b\f\n\r\t"`, `"\u0000\u001f\u001F\u0008"`, `"\u2028\u2029\ufffd"`,
		"\"\u2028\xff\"", `"é\u00e9"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\u00"`, "\"\x7f<>&\"", ` "x" `, `"a"b"`, `"a\"`, `1`} {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, wok := jsonscan.String(raw)
		got, ok := AppendText([]byte("pre"), raw)
		if ok != wok {
			t.Fatalf("AppendText(%q) ok %v; String ok %v", raw, ok, wok)
		}
		if !ok {
			return
		}
		m, err := Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if want := "pre" + string(m[1:len(m)-1]); string(got) != want {
			t.Fatalf("AppendText(%q) = %q; Marshal of its text %q", raw, got, want)
		}
	})
}
