package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/acptap/acptap/host/logthrottle"
)

// TestLogRateLimited (issue 18, point 8): an agent writing 20 000 lines
// that are not JSON makes the plugins warn once per frame; acptap.log
// keeps a burst of each warning and counts the rest in a "repeated log
// message suppressed" line instead of growing by a line per frame.
func TestLogRateLimited(t *testing.T) {
	const n = 20000
	root := filepath.Join(t.TempDir(), "store")
	in := filepath.Join(t.TempDir(), "lines")
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString("not json " + strconv.Itoa(i) + "\n")
	}
	writeFile(t, in, b.String())
	r := startRecord(t, []string{"--store", root}, []string{"/bin/sh", "-c", "cat '" + in + "'"})
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d: %s", code, r.stderr.String())
	}
	log := logText(t, root)
	lines := strings.Split(strings.TrimSpace(log), "\n")
	written, suppressed := 0, 0
	for _, l := range lines {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) != nil {
			continue
		}
		switch {
		case m["@message"] == logthrottle.SuppressedMessage && strings.Contains(m["message"].(string), "not valid JSON"):
			suppressed += int(m["suppressed"].(float64))
		case strings.Contains(m["@message"].(string), "not valid JSON"):
			written++
		}
	}
	if len(lines) > 300 {
		t.Errorf("acptap.log has %d lines for %d bad frames", len(lines), n)
	}
	if written+suppressed < n || suppressed == 0 {
		t.Errorf("%d warnings written and %d counted as suppressed, want at least %d in all", written, suppressed, n)
	}
	if st, err := os.Stat(filepath.Join(root, "logs", "acptap.log")); err == nil {
		t.Logf("acptap.log: %d lines, %d bytes; %d warnings written, %d suppressed", len(lines), st.Size(), written, suppressed)
	}
}

// TestArgvSecretsRedacted (issue 18, point 13): the agent's argv carries
// an API key, a token and a URL with a password; the agent gets them as
// they are, while the wire-log header and acptap.log (at debug level)
// hold them redacted.
func TestArgvSecretsRedacted(t *testing.T) {
	root := filepath.Join(t.TempDir(), "store")
	got := filepath.Join(t.TempDir(), "argv")
	args := []string{"--api-key=SECRET-A", "--token", "SECRET-B", "--endpoint", "https://me:SECRET-C@api.example/v1?api_key=SECRET-D"}
	agent := append([]string{"/bin/sh", "-c", `printf '%s\n' "$@" > '` + got + `'; cat > /dev/null`, "agent"}, args...)
	r := startRecord(t, []string{"--store", root, "--log-level", "debug"}, agent)
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d: %s", code, r.stderr.String())
	}
	if string(readFile(t, got)) != strings.Join(args, "\n")+"\n" {
		t.Errorf("the agent got %q, want %q", readFile(t, got), args)
	}
	header, _, _ := strings.Cut(string(readFile(t, wireLog(t, root))), "\n")
	for name, text := range map[string]string{"wire-log header": header, "acptap.log": logText(t, root)} {
		if strings.Contains(text, "SECRET") {
			t.Errorf("%s holds a secret of the argv:\n%s", name, text)
		}
		if !strings.Contains(text, "api.example") {
			t.Errorf("%s lost the argv:\n%s", name, text)
		}
	}
}
