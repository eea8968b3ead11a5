package aep

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Canonical returns the canonical JSON of v, as the AEP reference
// canonicalJson writes it: object keys sorted (by UTF-16 code units, as
// JavaScript sorts), no whitespace, scalars as JavaScript's JSON.stringify
// writes them (raw UTF-8, no escaping of <, > or &, U+2028 and U+2029
// unescaped, numbers in JavaScript's shortest form).
//
// v is a decoded JSON value (map[string]any, []any, string, json.Number,
// float64, bool, nil) or a Go value of those shapes: ints, []string,
// map[string]string and the like are accepted too.
func Canonical(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := writeCanon(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// CanonicalRaw parses raw JSON and returns its canonical form.
func CanonicalRaw(raw []byte) ([]byte, error) {
	v, err := Decode(raw)
	if err != nil {
		return nil, err
	}
	return Canonical(v)
}

// Decode parses raw JSON into a generic value, keeping numbers exact
// (json.Number).
func Decode(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return v, nil
}

// Digest is the AEP digest of a value (AEP-0003 §9.3): the first 16 bytes
// of the SHA-256 of its canonical JSON, as 32 lowercase hex characters.
// Digest the original value, before redaction.
func Digest(v any) (string, error) {
	c, err := Canonical(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:16]), nil
}

func writeCanon(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case string:
		writeString(b, x)
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return fmt.Errorf("number %s: %w", x, err)
		}
		return writeFloat(b, f)
	case float64:
		return writeFloat(b, x)
	case float32:
		return writeFloat(b, float64(x))
	case int:
		return writeFloat(b, float64(x))
	case int64:
		return writeFloat(b, float64(x))
	case uint64:
		return writeFloat(b, float64(x))
	case int32:
		return writeFloat(b, float64(x))
	case uint32:
		return writeFloat(b, float64(x))
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, compareUTF16)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			if err := writeCanon(b, x[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeCanon(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case json.RawMessage:
		d, err := Decode(x)
		if err != nil {
			return err
		}
		return writeCanon(b, d)
	default:
		// Other Go shapes ([]string, map[string]string, structs): through
		// encoding/json and back to a generic value.
		raw, err := json.Marshal(x)
		if err != nil {
			return err
		}
		d, err := Decode(raw)
		if err != nil {
			return err
		}
		return writeCanon(b, d)
	}
	return nil
}

// writeString writes s as JSON.stringify does: only ", \ and control
// characters are escaped.
func writeString(b *bytes.Buffer, s string) {
	if printableASCII(s) { // nothing to escape: the encoder would write it as it is
		b.WriteByte('"')
		b.WriteString(s)
		b.WriteByte('"')
		return
	}
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

// rawSeparators writes the encoder's escapes of U+2028 and U+2029 in out as the characters
// themselves. Only escapes count: in an escaped backslash followed by "u2028" (the text
// `\u2028` in the string) nothing is replaced, or the output would not be JSON.
func rawSeparators(out []byte) []byte {
	var r []byte
	last := 0
	for i := 0; i < len(out); i++ {
		if out[i] != '\\' || i+1 >= len(out) {
			continue
		}
		if i+5 < len(out) && string(out[i+1:i+5]) == "u202" && (out[i+5] == '8' || out[i+5] == '9') {
			r = append(r, out[last:i]...)
			r = utf8.AppendRune(r, 0x2028+rune(out[i+5]-'8'))
			last = i + 6
			i += 5
			continue
		}
		i++ // the escaped character: a backslash here starts no escape
	}
	if r == nil {
		return out
	}
	return append(r, out[last:]...)
}

// printableASCII reports whether s is printable ASCII without '"' or '\\'.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// writeFloat writes f in JavaScript's Number.prototype.toString form.
func writeFloat(b *bytes.Buffer, f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		b.WriteString("null")
		return nil
	}
	if f == 0 {
		b.WriteByte('0')
		return nil
	}
	abs := math.Abs(f)
	if abs >= 1e-6 && abs < 1e21 {
		b.WriteString(strconv.FormatFloat(f, 'f', -1, 64))
		return nil
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // 1e+21, 1.5e-07
	mant, exp, _ := strings.Cut(s, "e")
	sign := exp[0]
	exp = strings.TrimLeft(exp[1:], "0")
	b.WriteString(mant + "e" + string(sign) + exp)
	return nil
}

// compareUTF16 orders strings by UTF-16 code units, as JavaScript's default
// sort does (it differs from byte order only above U+FFFF).
func compareUTF16(a, b string) int {
	if a == b {
		return 0
	}
	if isASCII(a) && isASCII(b) { // one code unit a byte: byte order
		return strings.Compare(a, b)
	}
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	return slices.Compare(ua, ub)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
