package aep

import (
	"strings"
	"testing"
)

func TestRedactArgv(t *testing.T) {
	in := []string{"agent", "--api-key=SECRET1", "--token", "SECRET2", "--model", "big",
		"OPENAI_API_KEY=SECRET3", "--endpoint", "https://me:SECRET4@api.example/v1?api_key=SECRET5&x=1",
		"--openai-api-key", "SECRET6", "--header", "Authorization: Bearer SECRET7SECRET7", "sk-SECRET8SECRET8SECRET8SECRET8",
		"--token-file", "/run/tok", "--verbose"}
	out := RedactArgv(in)
	joined := strings.Join(out, " ")
	for i := 1; i <= 8; i++ {
		if strings.Contains(joined, "SECRET"+string(rune('0'+i))) {
			t.Errorf("SECRET%d survived: %q", i, out)
		}
	}
	for _, keep := range []string{"agent", "--model", "big", "--token-file", "/run/tok", "--verbose", "me:", "api.example/v1"} {
		if !strings.Contains(joined, keep) {
			t.Errorf("%q lost: %q", keep, out)
		}
	}
	if len(out) != len(in) || in[1] != "--api-key=SECRET1" {
		t.Error("RedactArgv changed the length or its input")
	}
}

func TestRedactSecretsURLs(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:pa55@host/x":                   "https://user:" + RedactedSecret + "@host/x",
		"postgres://u:p@db:5432/app?sslmode=off":     "postgres://u:" + RedactedSecret + "@db:5432/app?sslmode=off",
		"https://h/p?access_token=abc&q=1":           "https://h/p?access_token=" + RedactedSecret + "&q=1",
		"https://h/p?q=1&sig=abc#frag":               "https://h/p?q=1&sig=" + RedactedSecret + "#frag",
		"ssh://git@github.com/x":                     "ssh://git@github.com/x",
		"plain text, me@example.com, nothing secret": "plain text, me@example.com, nothing secret",
	} {
		if got := RedactSecrets(in); got != want {
			t.Errorf("RedactSecrets(%q) = %q, want %q", in, got, want)
		}
	}
}
