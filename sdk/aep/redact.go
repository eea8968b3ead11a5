package aep

import (
	"regexp"
	"sort"
	"strings"
)

// Replacement markers of the redaction pipeline.
const (
	RedactedSecret = "[REDACTED:secret]"
	RedactedPII    = "[REDACTED:pii]"
)

// Redactor is the AEP-0003 §9.4 redaction pipeline, in its required
// order: (a) secrets, (b) operator-listed secret values, (c) the home
// directory prefix, (d) PII. The patterns are those of the AEP conformance
// runner (conformance/run.py), ported to RE2.
type Redactor struct {
	// Home is the operator's home directory; it and every /home/<user>,
	// /Users/<user> and C:\Users\<user> prefix become "~".
	Home string
	// Secrets are literal secret values (rule b); values shorter than 4
	// bytes are ignored.
	Secrets []string
	// SecretKeys are extra object keys (compared case-insensitively) whose
	// values Value drops, beside the built-in credential names.
	SecretKeys []string
	// NoPII turns rule (d) off (it is on by default).
	NoPII bool
}

var secretPatterns = []*regexp.Regexp{
	regexp.MustCompile(`-----BEGIN [A-Z ]+-----[\s\S]*?-----END [A-Z ]+-----`),
	regexp.MustCompile(`AKIA[0-9A-Z]{16}`),
	regexp.MustCompile(`(?i)\bBearer\s+[A-Za-z0-9\-._~+/]{8,}=*`),
	regexp.MustCompile(`(?i)\b(password|passwd|secret|api[_-]?key|token|authorization)\b["']?\s*[=:]\s*["']?\S+`),
	regexp.MustCompile(`\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\b`),
	regexp.MustCompile(`\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}\b`),
	regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{20,}\b`),
	regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}\b`),
	regexp.MustCompile(`\bxox[baprs]-[A-Za-z0-9-]{10,}\b`),
	regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{20,}\b`),
	regexp.MustCompile(`\bAIza[A-Za-z0-9_-]{35}\b`),
}

var (
	homePaths  = regexp.MustCompile(`(?:/home|/Users)/[^/\s"']+`)
	winHome    = regexp.MustCompile(`[A-Za-z]:\\Users\\[^\\\s"']+`)
	email      = regexp.MustCompile(`\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b`)
	phoneStart = regexp.MustCompile(`\+?\d`)
	secretKey  = regexp.MustCompile(`(?i)^(password|passwd|secret|api[_-]?key|token|authorization|credentials?|private[_-]?key|access[_-]?key)$`)
)

// Text redacts free text.
func (r Redactor) Text(s string) string {
	for _, re := range secretPatterns {
		s = re.ReplaceAllLiteralString(s, RedactedSecret)
	}
	secrets := append([]string(nil), r.Secrets...)
	sort.Slice(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
	for _, v := range secrets {
		if len(v) >= 4 {
			s = strings.ReplaceAll(s, v, RedactedSecret)
		}
	}
	if h := strings.TrimRight(r.Home, `/\`); len(h) > 1 {
		s = strings.ReplaceAll(s, h, "~")
	}
	s = homePaths.ReplaceAllLiteralString(s, "~")
	s = winHome.ReplaceAllLiteralString(s, "~")
	if !r.NoPII {
		s = email.ReplaceAllLiteralString(s, RedactedPII)
		s = redactPhones(s)
	}
	return s
}

// Value redacts a decoded JSON value: every string through Text, and the
// non-null value of every credential-named key replaced whole. Other
// scalars are kept. The input is not modified.
func (r Redactor) Value(v any) any {
	switch x := v.(type) {
	case string:
		return r.Text(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if e != nil && r.isSecretKey(k) {
				out[k] = RedactedSecret
				continue
			}
			out[k] = r.Value(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = r.Value(e)
		}
		return out
	}
	return v
}

func (r Redactor) isSecretKey(k string) bool {
	if secretKey.MatchString(k) {
		return true
	}
	for _, n := range r.SecretKeys {
		if strings.EqualFold(n, k) {
			return true
		}
	}
	return false
}

// redactPhones replaces phone numbers: (?<![\d\w])\+?\d[\d\s().-]{6,}\d(?![\d\w])
// without lookaround, as Python's backtracking would match it.
func redactPhones(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		loc := phoneStart.FindStringIndex(s[i:])
		if loc == nil {
			break
		}
		start := i + loc[0]
		if end, ok := phoneAt(s, start); ok {
			b.WriteString(s[last:start])
			b.WriteString(RedactedPII)
			last, i = end, end
			continue
		}
		i = start + 1
	}
	b.WriteString(s[last:])
	return b.String()
}

func isWord(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

func isPhoneMiddle(c byte) bool {
	return c >= '0' && c <= '9' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' ||
		c == '(' || c == ')' || c == '.' || c == '-'
}

// phoneAt returns the end of the longest phone match starting at start.
func phoneAt(s string, start int) (int, bool) {
	if start > 0 && isWord(s[start-1]) {
		return 0, false
	}
	j := start
	if s[j] == '+' {
		j++
	}
	if j >= len(s) || s[j] < '0' || s[j] > '9' {
		return 0, false
	}
	first := j
	k := first + 1
	for k < len(s) && isPhoneMiddle(s[k]) {
		k++
	}
	// The match ends on a digit with at least 6 middle characters before it
	// and no word character after it; try the longest first.
	for end := k; end-1 >= first+7; end-- {
		c := s[end-1]
		if c < '0' || c > '9' {
			continue
		}
		if end < len(s) && isWord(s[end]) {
			continue
		}
		return end, true
	}
	return 0, false
}
