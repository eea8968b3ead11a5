package aep

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// benchText is n bytes of what an agent streams: prose, Go code, shell
// output with paths under /home, JSON, numbers and dates, and now and then
// something the pipeline redacts (a token assignment, an email, a phone
// number, a bearer header, a home path). Deterministic.
func benchText(n int) string {
	r := rand.New(rand.NewPCG(1, 2))
	pieces := []string{
		"The quick brown fox jumps over the lazy dog. ",
		"func main() {\n\tfmt.Println(\"hello, world\")\n}\n",
		"ok  \tgithub.com/acme/widget/internal/store\t0.412s\n",
		"--- FAIL: TestParse (0.00s)\n    parse_test.go:42: got 3, want 4\n",
		"/home/alice/src/widget/main.go:17:2: undefined: frobnicate\n",
		`{"id": 1234, "name": "widget", "tags": ["a", "b"], "updated": "2026-10-26T14:30:41Z"}` + "\n",
		"Step 3 of 7: compiling 128 packages in 4.2s (load 0.93)\n",
		"Let me look at the configuration file and the tests before I change anything. ",
		"    if err != nil {\n        return fmt.Errorf(\"read %s: %w\", path, err)\n    }\n",
	}
	rare := []string{
		"export API_KEY=abcd1234efgh5678\n",
		"contact me at bob.smith@example.com or ",
		"call +1 (555) 010-2030 tomorrow. ",
		"Authorization: Bearer abcdefghijklmnop.qrstu\n",
		"see C:\\Users\\carol\\AppData\\Local\\app.log\n",
		"token: ghp_abcdefghijklmnopqrstuvwxyz0123\n",
	}
	var b strings.Builder
	for b.Len() < n {
		if r.IntN(40) == 0 {
			b.WriteString(rare[r.IntN(len(rare))])
		} else {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
	}
	return b.String()[:n]
}

// BenchmarkRedactText reports the pipeline's rate on multi-MB text (and on
// delta-sized chunks), the reference (the pre-optimisation algorithm) in the
// same run for comparison.
//
//	go test ./sdk/aep/ -run '^$' -bench RedactText
func BenchmarkRedactText(b *testing.B) {
	r := Redactor{Home: "/home/tester", Secrets: []string{"s3cr3t-value"}}
	for _, size := range []int{64, 4 << 10, 4 << 20} {
		s := benchText(size)
		for _, v := range []struct {
			name string
			f    func(Redactor, string) string
		}{{"fast", Redactor.Text}, {"reference", referenceText}} {
			b.Run(fmt.Sprintf("%s/%dB", v.name, size), func(b *testing.B) {
				b.SetBytes(int64(size))
				for b.Loop() {
					v.f(r, s)
				}
			})
		}
	}
}
