package cli

import (
	"bytes"
	"strings"
	"testing"
)

// One entry a command: `acptap --help` once listed export twice, with two meanings.
func TestUsageListsEachCommandOnce(t *testing.T) {
	seen := map[string]int{}
	for _, c := range commands() {
		seen[c.name]++
	}
	for name, n := range seen {
		if n != 1 {
			t.Errorf("command %q listed %d times", name, n)
		}
	}
	var b bytes.Buffer
	usage(&b)
	for name := range seen {
		if !strings.Contains(b.String(), "\n  "+name+" ") {
			t.Errorf("usage does not list %q:\n%s", name, b.String())
		}
	}
}
