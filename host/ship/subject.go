package ship

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/acptap/acptap/host/store"
)

// Subjects are <prefix>.<origin>.<segment>… where the segments are those of
// the output's path in the store (sessions/<name>/stream.asr.jsonl becomes
// sessions.<name>.stream%2Easr%2Ejsonl). Every token is escaped so that it
// holds no '.', '*', '>', '%' or byte outside printable ASCII, which keeps
// the mapping reversible and lets permissions grant an origin exactly
// <prefix>.<origin>.>.

// Token escapes s into one subject token: bytes in [A-Za-z0-9_@+=~:-] stay,
// every other byte becomes %XX. The empty string becomes "%".
func Token(s string) string {
	if s == "" {
		return "%"
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if tokenPlain(c) {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

func tokenPlain(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("_@+=~:-", c) >= 0
}

var errToken = errors.New("not an escaped subject token")

// Untoken reverses Token.
func Untoken(t string) (string, error) {
	if t == "%" {
		return "", nil
	}
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c != '%' {
			if !tokenPlain(c) {
				return "", fmt.Errorf("%q: %w", t, errToken)
			}
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(t) {
			return "", fmt.Errorf("%q: %w", t, errToken)
		}
		var v byte
		if _, err := fmt.Sscanf(t[i+1:i+3], "%02X", &v); err != nil || tokenPlain(v) {
			return "", fmt.Errorf("%q: %w", t, errToken)
		}
		b.WriteByte(v)
		i += 2
	}
	return b.String(), nil
}

// Subject is the subject of the output at rel (a slash-separated path inside
// the store) shipped by origin.
func Subject(prefix, origin, rel string) string {
	parts := []string{prefix, Token(origin)}
	for seg := range strings.SplitSeq(rel, "/") {
		parts = append(parts, Token(seg))
	}
	return strings.Join(parts, ".")
}

// OriginFilter is the subject filter of everything origin ships.
func OriginFilter(prefix, origin string) string { return prefix + "." + Token(origin) + ".>" }

// ParseSubject splits a subject made by Subject into its origin and its
// output path, and checks that the path is one an output can have.
func ParseSubject(prefix, subject string) (origin, rel string, err error) {
	rest, ok := strings.CutPrefix(subject, prefix+".")
	if !ok {
		return "", "", fmt.Errorf("subject %q: not under %q", subject, prefix)
	}
	toks := strings.Split(rest, ".")
	if len(toks) < 2 {
		return "", "", fmt.Errorf("subject %q: no output path", subject)
	}
	origin, err = Untoken(toks[0])
	if err != nil {
		return "", "", err
	}
	segs := make([]string, 0, len(toks)-1)
	for _, t := range toks[1:] {
		s, err := Untoken(t)
		if err != nil {
			return "", "", err
		}
		segs = append(segs, s)
	}
	rel = strings.Join(segs, "/")
	if !OutputPath(rel) {
		return "", "", fmt.Errorf("subject %q: %q is not an output of a store", subject, rel)
	}
	if err := CheckOrigin(origin); err != nil {
		return "", "", fmt.Errorf("subject %q: %w", subject, err)
	}
	return origin, rel, nil
}

var originName = regexp.MustCompile(`^[A-Za-z0-9_@-][A-Za-z0-9._@-]{0,127}$`)

// CheckOrigin refuses an origin that cannot name a directory of its own in
// the central store: letters, digits, '.', '_', '-' and '@', not starting
// with '.', at most 128 bytes.
func CheckOrigin(origin string) error {
	if !originName.MatchString(origin) {
		return fmt.Errorf("origin %q: must be letters, digits, '.', '_', '-' and '@', not starting with '.'", origin)
	}
	return nil
}

// OutputPath reports whether rel is a path the shipper publishes and the
// collector writes: sessions/<name>/<file>.asr.jsonl, sessions/<name>/id,
// aep/acp/<name>.jsonl or wire/<name>.jsonl, with names the store makes.
func OutputPath(rel string) bool {
	if rel != path.Clean(rel) || strings.HasPrefix(rel, "/") {
		return false
	}
	segs := strings.Split(rel, "/")
	for _, s := range segs {
		if s == "" || s == "." || s == ".." || strings.HasPrefix(s, ".") {
			return false
		}
	}
	switch {
	case len(segs) == 3 && segs[0] == "sessions":
		if !storeName(segs[1]) {
			return false
		}
		return segs[2] == "id" || (strings.HasSuffix(segs[2], ".asr.jsonl") && !strings.Contains(segs[2], ".prev-"))
	case len(segs) == 3 && segs[0] == "aep" && segs[1] == "acp":
		return jsonlName(segs[2])
	case len(segs) == 2 && segs[0] == "wire":
		return jsonlName(segs[1])
	}
	return false
}

func jsonlName(name string) bool {
	base, ok := strings.CutSuffix(name, ".jsonl")
	return ok && storeName(base)
}

// storeName reports whether name is one the store's escaping makes (plain or
// hashed).
func storeName(name string) bool {
	if name == "" || strings.ContainsAny(name, "/\x00") {
		return false
	}
	if _, err := store.UnescapeID(name); err == nil || errors.Is(err, store.ErrHashedName) {
		return true
	}
	return false
}
