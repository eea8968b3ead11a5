package aep

import (
	"regexp"
	"sort"
	"strings"
)

// referenceText is Redactor.Text as it was before it was made fast: every
// pattern of the pipeline run over the whole text, one after the other.
// The differential and fuzz tests hold the fast pipeline to it.
func referenceText(r Redactor, s string) string {
	for _, re := range refSecretPatterns {
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
	s = refHomePaths.ReplaceAllLiteralString(s, "~")
	s = refWinHome.ReplaceAllLiteralString(s, "~")
	if !r.NoPII {
		s = refEmail.ReplaceAllLiteralString(s, RedactedPII)
		s = refRedactPhones(s)
	}
	return s
}

var refSecretPatterns = []*regexp.Regexp{
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
	refHomePaths  = regexp.MustCompile(`(?:/home|/Users)/[^/\s"']+`)
	refWinHome    = regexp.MustCompile(`[A-Za-z]:\\Users\\[^\\\s"']+`)
	refEmail      = regexp.MustCompile(`\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b`)
	refPhoneStart = regexp.MustCompile(`\+?\d`)
)

func refRedactPhones(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		loc := refPhoneStart.FindStringIndex(s[i:])
		if loc == nil {
			break
		}
		start := i + loc[0]
		if end, ok := refPhoneAt(s, start); ok {
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

func refIsWord(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

func refIsPhoneMiddle(c byte) bool {
	return c >= '0' && c <= '9' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' ||
		c == '(' || c == ')' || c == '.' || c == '-'
}

func refPhoneAt(s string, start int) (int, bool) {
	if start > 0 && refIsWord(s[start-1]) {
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
	for k < len(s) && refIsPhoneMiddle(s[k]) {
		k++
	}
	for end := k; end-1 >= first+7; end-- {
		c := s[end-1]
		if c < '0' || c > '9' {
			continue
		}
		if end < len(s) && refIsWord(s[end]) {
			continue
		}
		return end, true
	}
	return 0, false
}
