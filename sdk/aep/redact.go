package aep

import (
	"bytes"
	"math/bits"
	"regexp"
	"sort"
	"strings"
	"sync"
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

// secretRules are rule (a): the secret patterns, applied one after the
// other in this order, each to the output of the one before.
var secretRules = []*rule{
	plainRule(`-----BEGIN [A-Z ]+-----[\s\S]*?-----END [A-Z ]+-----`, "-----BEGIN "),
	plainRule(`AKIA[0-9A-Z]{16}`, "AKIA"),
	wordRule(`(?i)\bBearer\s+[A-Za-z0-9\-._~+/]{8,}=*`, true, "bearer"),
	wordRule(`(?i)\b(password|passwd|secret|api[_-]?key|token|authorization)\b["']?\s*[=:]\s*["']?\S+`, true,
		"passw", "secret", "api", "token", "authorization"),
	wordRule(`\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\b`, false, "eyJ"),
	wordRule(`\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}\b`, false, "gh"),
	wordRule(`\bgithub_pat_[A-Za-z0-9_]{20,}\b`, false, "github_pat_"),
	wordRule(`\bglpat-[A-Za-z0-9_-]{20,}\b`, false, "glpat-"),
	wordRule(`\bxox[baprs]-[A-Za-z0-9-]{10,}\b`, false, "xox"),
	wordRule(`\bsk-[A-Za-z0-9_-]{20,}\b`, false, "sk-"),
	wordRule(`\bAIza[A-Za-z0-9_-]{35}\b`, false, "AIza"),
}

// The home rules are (?:/home|/Users)/[^/\s"']+ and
// [A-Za-z]:\\Users\\[^\\\s"']+ (rule c), matched by hand: \s is
// [\t\n\f\r ], and every other byte, of a multi-byte rune or of invalid
// UTF-8 (which the regexp reads as U+FFFD), is in the negated class.
var (
	homePaths = &rule{lits: []string{"/home/", "/Users/"}, match: func(s string) int {
		n := len("/home/")
		if strings.HasPrefix(s, "/Users/") {
			n = len("/Users/")
		}
		return homeRest(s, n, '/')
	}}
	// A Windows home starts one letter before its `:\Users\`.
	winHome = &rule{lits: []string{`:\Users\`}, back: 1, match: func(s string) int {
		if c := s[0] | 0x20; c < 'a' || c > 'z' {
			return -1
		}
		return homeRest(s, len(`C:\Users\`), '\\')
	}}
	// emailAt is the email pattern (rule d),
	// \b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b, anchored at its
	// start, whose \b redactEmails checks.
	emailAt   = regexp.MustCompile(`^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b`)
	secretKey = regexp.MustCompile(`(?i)^(password|passwd|secret|api[_-]?key|token|authorization|credentials?|private[_-]?key|access[_-]?key)$`)
)

// Text redacts free text.
//
// The result is that of running each pattern over the whole text with
// regexp.ReplaceAllLiteralString, one after the other (the reference the
// differential and fuzz tests hold it to), but a pattern only runs where a
// match can start, anchored there: at a literal every match of it starts
// with (or holds at a fixed offset from its start), found with
// strings.Index. The patterns that start with \b and a word are first
// looked for in one pass over the word starts of the text, and skipped
// when none of their literals starts a word. A text with nothing to redact
// is returned as it is, without a copy or an allocation.
func (r Redactor) Text(s string) string {
	s = secretPatterns(s)
	if r.hasSecret(s) {
		secrets := append([]string(nil), r.Secrets...)
		sort.Slice(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
		for _, v := range secrets {
			if len(v) >= 4 {
				s = strings.ReplaceAll(s, v, RedactedSecret)
			}
		}
	}
	if h := strings.TrimRight(r.Home, `/\`); len(h) > 1 {
		s = strings.ReplaceAll(s, h, "~")
	}
	s = homePaths.replace(s, "~", nil, nil)
	s = winHome.replace(s, "~", nil, nil)
	if !r.NoPII {
		s = redactEmails(s)
		s = redactPhones(s)
	}
	return s
}

// secretPatterns is rule (a): every secret pattern, in order.
func secretPatterns(s string) string {
	var low lowered
	var cand uint32 // word rules that may match in s
	for i, ru := range secretRules {
		if !ru.word {
			if s = ru.replace(s, RedactedSecret, &low, nil); i == firstWordRule-1 {
				cand = wordCandidates(s)
			}
			continue
		}
		if cand&(1<<i) == 0 {
			continue // none of its literals starts a word
		}
		var seams []int
		t := ru.replace(s, RedactedSecret, &low, &seams)
		if len(t) == len(s) && t == s {
			continue
		}
		s = t
		if seams == nil { // replaced by the regexp: where is not known
			cand = wordCandidates(s)
			continue
		}
		// What the replacement changed for the later rules: the marker's
		// words, and a word that now starts after a marker.
		cand |= markerCandidates
		for _, e := range seams {
			if e < len(s) && wordByte[s[e]] {
				cand |= candidatesAt(s, e)
			}
		}
	}
	low.release()
	return s
}

// hasSecret reports whether s contains one of the operator's secret values
// that rule (b) replaces.
func (r Redactor) hasSecret(s string) bool {
	for _, v := range r.Secrets {
		if len(v) >= 4 && strings.Contains(s, v) {
			return true
		}
	}
	return false
}

// homeRest is the length of a home match whose prefix is s[:n]: the
// prefix and at least one byte that is not sep, whitespace or a quote.
func homeRest(s string, n int, sep byte) int {
	k := n
	for k < len(s) {
		switch s[k] {
		case sep, '\t', '\n', '\f', '\r', ' ', '"', '\'':
			goto end
		}
		k++
	}
end:
	if k == n {
		return -1
	}
	return k
}

// rule is one pattern of the pipeline with what it takes to find its
// matches without running the regexp over the whole text.
type rule struct {
	re *regexp.Regexp // the pattern
	// plain rules run re over the text when it contains lits[0] (re
	// starts with that literal, so the regexp skips to it by itself).
	plain bool
	// at is the pattern anchored at the match's start, without its
	// leading \b; a match starts back bytes before an occurrence of one
	// of lits.
	at   *regexp.Regexp
	lits []string
	back int
	// match, when set, is at by hand: the length of the match at the
	// start of s, or -1.
	match func(s string) int
	// fold: lits are lower case and found ASCII-case-insensitively (re is
	// (?i)). Two non-ASCII runes fold to ASCII letters, ſ to s and the
	// Kelvin sign to k: a text holding one of them runs re instead.
	fold bool
	// word: re starts with \b before a word character, so the byte before
	// a match must not be one.
	word bool
}

func plainRule(expr, lit string) *rule {
	return &rule{re: regexp.MustCompile(expr), plain: true, lits: []string{lit}}
}

// wordRule is a rule whose pattern is \b (after an optional (?i)), then
// one of lits at the match's start.
func wordRule(expr string, fold bool, lits ...string) *rule {
	anchored := "^" + strings.Replace(expr, `\b`, "", 1)
	return &rule{re: regexp.MustCompile(expr), at: regexp.MustCompile(anchored), lits: lits, fold: fold, word: true}
}

// firstByte maps a byte to the word rules (bits by index in secretRules)
// one of whose literals starts with it (either case for (?i) rules);
// foldRules are the (?i) rules.
var firstByte, foldRules = func() (t [256]uint32, fold uint32) {
	for i, ru := range secretRules {
		if !ru.word {
			continue
		}
		if ru.fold {
			fold |= 1 << i
		}
		for _, lit := range ru.lits {
			t[lit[0]] |= 1 << i
			if ru.fold {
				t[lit[0]&^0x20] |= 1 << i
			}
		}
	}
	return t, fold
}()

// firstWordRule is the index of the first word rule: the rules before it
// are plain.
const firstWordRule = 2

// markerCandidates are the word rules with a literal at a word start of
// the marker (its "secret").
var markerCandidates = wordCandidates(RedactedSecret)

// wordByte tells the bytes of \w: [0-9A-Za-z_].
var wordByte = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = isWord(byte(c))
	}
	return t
}()

// candidatesAt returns the word rules with a literal at s[i:].
func candidatesAt(s string, i int) uint32 {
	var found uint32
	for m := firstByte[s[i]]; m != 0; {
		k := bits.TrailingZeros32(m)
		m &^= 1 << k
		if secretRules[k].startsAt(s, i) {
			found |= 1 << k
		}
	}
	return found
}

// wordCandidates returns the word rules that may match in s: those with a
// literal at a word start (the byte before it not a word character), in
// one pass over s. A word rule can only match at such a place. A text with
// a rune that folds to an ASCII letter (ſ, K, anywhere in a literal) has
// every (?i) rule for a candidate.
func wordCandidates(s string) uint32 {
	var found uint32
	for _, f := range foldsToASCII {
		if strings.Contains(s, f) {
			found |= foldRules
		}
	}
	prevWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !prevWord && firstByte[c]&^found != 0 {
			found |= candidatesAt(s, i)
		}
		prevWord = wordByte[c]
	}
	return found
}

// startsAt reports whether one of the rule's literals is at s[i:]
// (ASCII-case-insensitively for a (?i) rule).
func (ru *rule) startsAt(s string, i int) bool {
	for _, lit := range ru.lits {
		if len(s)-i < len(lit) {
			continue
		}
		w := s[i : i+len(lit)]
		if w == lit || ru.fold && equalFoldASCII(w, lit) {
			return true
		}
	}
	return false
}

// equalFoldASCII compares w with the lower-case ASCII lit, ignoring the
// case of ASCII letters only.
func equalFoldASCII(w, lit string) bool {
	for k := 0; k < len(lit); k++ {
		c := w[k]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lit[k] {
			return false
		}
	}
	return true
}

// foldsToASCII are the UTF-8 forms of the runes other than ASCII letters
// that Go's case folding maps to an ASCII letter (ſ → s, K → k).
var foldsToASCII = []string{"\u017f", "\u212a"}

// lowered holds the ASCII lower-case form of the text the (?i) rules
// search, while the text does not change, in a buffer from lowPool.
type lowered struct {
	of  string
	buf *[]byte
}

var lowPool = sync.Pool{New: func() any { return new([]byte) }}

func (l *lowered) get(s string) []byte {
	if l.buf == nil {
		l.buf = lowPool.Get().(*[]byte)
	} else if len(l.of) == len(s) && l.of == s {
		return *l.buf
	}
	b := append((*l.buf)[:0], s...)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	l.of, *l.buf = s, b
	return b
}

func (l *lowered) release() {
	if l.buf != nil {
		if cap(*l.buf) > 1<<24 {
			*l.buf = nil // not worth keeping
		}
		lowPool.Put(l.buf)
		l.buf = nil
	}
}

// replace replaces every match of the rule in s with repl, as
// ru.re.ReplaceAllLiteralString(s, repl) does. seams, when not nil, gets
// the offset in the result after each replacement, unless the regexp
// itself replaced.
func (ru *rule) replace(s, repl string, low *lowered, seams *[]int) string {
	if ru.plain {
		if !strings.Contains(s, ru.lits[0]) {
			return s
		}
		return ru.re.ReplaceAllLiteralString(s, repl)
	}
	index := func(from int, lit string) int { return strings.Index(s[from:], lit) }
	if ru.fold {
		for _, f := range foldsToASCII {
			if strings.Contains(s, f) {
				return ru.re.ReplaceAllLiteralString(s, repl)
			}
		}
		hay := low.get(s)
		index = func(from int, lit string) int { return bytes.Index(hay[from:], []byte(lit)) }
	}
	var buf [8]int
	next := buf[:len(ru.lits)] // next occurrence of each literal at or after the search position
	for i := range next {
		next[i] = -1
	}
	var b strings.Builder
	last, pos := 0, 0
	for pos < len(s) {
		// The next literal at or after pos+back, so that the match would
		// start at or after pos, as the regexp's next search does.
		from, q := pos+ru.back, -1
		for i, lit := range ru.lits {
			if next[i] != len(s) && next[i] < from {
				next[i] = len(s)
				if j := index(from, lit); j >= 0 {
					next[i] = from + j
				}
			}
			if next[i] < len(s) && (q < 0 || next[i] < q) {
				q = next[i]
			}
		}
		if q < 0 {
			break
		}
		p := q - ru.back
		if !ru.word || p == 0 || !isWord(s[p-1]) {
			n := -1
			if ru.match != nil {
				n = ru.match(s[p:])
			} else if loc := ru.at.FindStringIndex(s[p:]); loc != nil {
				n = loc[1]
			}
			if n > 0 {
				if b.Len() == 0 {
					b.Grow(len(s))
				}
				b.WriteString(s[last:p])
				b.WriteString(repl)
				if seams != nil {
					*seams = append(*seams, b.Len())
				}
				last, pos = p+n, p+n
				continue
			}
		}
		pos = p + 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// redactEmails replaces email addresses, as
// email.ReplaceAllLiteralString(s, RedactedPII) does. A match holds an @;
// its start is the first word boundary in the run of local-part characters
// before that @ (the rest of the match does not depend on where in the run
// it starts, so no later start can match when the first does not).
func redactEmails(s string) string {
	var b strings.Builder
	last, pos := 0, 0
	for pos < len(s) {
		j := strings.IndexByte(s[pos:], '@')
		if j < 0 {
			break
		}
		a := pos + j
		r := a
		for r > pos && isLocal(s[r-1]) {
			r--
		}
		p := -1
		for k := r; k < a; k++ {
			if (k > 0 && isWord(s[k-1])) != isWord(s[k]) {
				p = k
				break
			}
		}
		if p >= 0 {
			if loc := emailAt.FindStringIndex(s[p:]); loc != nil {
				if b.Len() == 0 {
					b.Grow(len(s))
				}
				b.WriteString(s[last:p])
				b.WriteString(RedactedPII)
				last, pos = p+loc[1], p+loc[1]
				continue
			}
		}
		pos = a + 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func isLocal(c byte) bool {
	return isWord(c) || c == '.' || c == '%' || c == '+' || c == '-'
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
// without lookaround, as Python's backtracking would match it. A match
// starts where \+?\d does: at a digit, or at a + before one.
func redactPhones(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		start := -1
		for k := i; k < len(s); k++ {
			if isDigit(s[k]) || s[k] == '+' && k+1 < len(s) && isDigit(s[k+1]) {
				start = k
				break
			}
		}
		if start < 0 {
			break
		}
		if end, ok := phoneAt(s, start); ok {
			if b.Len() == 0 {
				b.Grow(len(s))
			}
			b.WriteString(s[last:start])
			b.WriteString(RedactedPII)
			last, i = end, end
			continue
		}
		i = start + 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

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
