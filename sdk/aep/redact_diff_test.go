package aep

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// redactors are the configurations the differential tests run: defaults,
// a home, operator secrets (one inside another, one that the redaction
// marker contains), PII off.
var redactors = []Redactor{
	{},
	{Home: "/home/tester", Secrets: []string{"s3cr3t-value", "s3cr3t", "ACTED", "abc"}},
	{Home: `C:\Users\tester\`, NoPII: true},
}

// redactTokens are the pieces the random texts are made of: what each
// pattern needs, near misses, boundaries, the runes that fold to ASCII
// letters, invalid UTF-8.
var redactTokens = []string{
	" ", "\n", "\t", "=", ":", "\"", "'", ".", "-", "_", "+", "(", ")", "/", `\`, "@", "%", "~", "x", "A", "Z", "0", "7", "12", "555",
	"-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "-----BEGIN ", "-----END X-----",
	"AKIA", "AKIAABCDEFGHIJKLMNOP", "Bearer", "bearer ", "BEARER", "abcdefgh", "==",
	"password", "PassWord", "passwd", "secret", "api_key", "api-key", "APIKEY", "api", "key", "token", "Token", "authorization",
	"eyJ", "eyJhbGciOi", "ghp_", "gho_", "ghr_", "github_pat_", "glpat-", "xoxb-", "xox", "sk-", "AIza",
	"abcdefghijklmnopqrstuvwxyz0123", "ABCDEFGHIJKLMNOPQRSTU", "0123456789",
	"/home/", "/home/alice", "/Users/bob", "/home/tester/", "C:", `C:\Users\`, `:\Users\`, `d:\Users\eve`, "tester",
	"bob.smith", "@example.com", "example.com", ".io", "a@b.co", "x@y",
	"+1", "+44 20", "(555) 010-2030", "555-0100", "2026-10-26", "1.2.3.4",
	"ſ", "K", "é", "toKen", "ſecret", "paſſword", "api_Key", "BEARER", "Bearer\u212a", "\xff", "\xe2\x84", "[REDACTED:secret]", "[REDACTED:pii]",
	"s3cr3t-value", "s3cr3t", "ACTED",
}

func randomText(r *rand.Rand, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(redactTokens[r.IntN(len(redactTokens))])
	}
	return b.String()
}

// TestRedactTextMatchesReference: the fast pipeline gives the reference's
// result (every pattern run over the whole text) on texts built from
// pieces that make each pattern match, nearly match and overlap, and on
// the benchmark's text.
func TestRedactTextMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	texts := append([]string{"", benchText(1 << 16)}, redactTokens...)
	for i := 0; i < 8000; i++ {
		texts = append(texts, randomText(r, 1+r.IntN(24)))
	}
	for _, s := range texts {
		for _, rd := range redactors {
			if got, want := rd.Text(s), referenceText(rd, s); got != want {
				t.Fatalf("Text(%q) with %+v\n got %q\nwant %q", s, rd, got, want)
			}
		}
	}
}

// TestRedactTextUnchangedIsNotCopied: a text with nothing to redact comes
// back as it is.
func TestRedactTextUnchangedIsNotCopied(t *testing.T) {
	s := strings.Repeat("nothing to see here, move along. ", 1000)
	if got := (Redactor{}).Text(s); got != s {
		t.Fatalf("changed: %q", got)
	}
	if n := testing.AllocsPerRun(10, func() { (Redactor{Home: "/home/tester"}).Text(s) }); n > 0 {
		t.Errorf("%v allocations for a text with nothing to redact", n)
	}
}

// FuzzRedactText: the fast pipeline gives the reference's result.
//
//	go test ./sdk/aep/ -run '^$' -fuzz FuzzRedactText -fuzztime 60s
func FuzzRedactText(f *testing.F) {
	for _, s := range redactTokens {
		f.Add(s, uint8(0))
	}
	f.Add("export TOKEN=abc; mail bob@example.com, call +1 (555) 010-2030 from /home/tester/x", uint8(1))
	f.Add("Authorization: Bearer abcdefghijklmnop.qrstu ſecret=1 toKen: x", uint8(2))
	f.Fuzz(func(t *testing.T, s string, cfg uint8) {
		rd := redactors[int(cfg)%len(redactors)]
		if got, want := rd.Text(s), referenceText(rd, s); got != want {
			t.Fatalf("Text(%q) with %+v\n got %q\nwant %q", s, rd, got, want)
		}
	})
}
