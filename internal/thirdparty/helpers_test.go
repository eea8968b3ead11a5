package thirdparty

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/sdk"
)

// wireOf returns the store's one wire log and its frames' lines, each
// direction joined as the bytes that crossed (each line and its LF).
func wireOf(t *testing.T, store string) (path string, c2a, a2c []byte, lines []string) {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(store, "wire", "*.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("wire logs %v, want one", logs)
	}
	r, err := wire.Open(logs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var in, out bytes.Buffer
	for {
		e, err := r.Next()
		if err != nil {
			break
		}
		if e.Type == wire.TypeGap {
			t.Errorf("the wire log has a gap: %+v", e.Gap)
		}
		if e.Type != wire.TypeFrame {
			continue
		}
		buf := &in
		if e.Dir == sdk.A2C {
			buf = &out
		}
		buf.Write(e.Line)
		if !e.NoLF {
			buf.WriteByte('\n')
		}
		lines = append(lines, string(e.Line))
	}
	return logs[0], in.Bytes(), out.Bytes(), lines
}

// noSecrets fails the test for every file of the store holding a secret.
func noSecrets(t *testing.T, store string, secrets ...string) {
	t.Helper()
	_ = filepath.WalkDir(store, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(p)
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds the secret %q", p, s)
			}
		}
		return nil
	})
}

// storedSessions is `acptap sessions --json`.
type storedSessions struct {
	Sessions []struct {
		ID       string   `json:"id"`
		Agent    string   `json:"agent"`
		Revision string   `json:"revision"`
		Turns    int      `json:"turns"`
		Records  int      `json:"records"`
		Failures int      `json:"failures"`
		Losses   []string `json:"losses"`
		Stream   string   `json:"stream"`
	} `json:"sessions"`
}

func listSessions(t *testing.T, store string) storedSessions {
	t.Helper()
	out, errs, code := run(t, "sessions", "--json", "--store", store)
	if code != 0 {
		t.Fatalf("acptap sessions: exit %d\n%s", code, errs)
	}
	var s storedSessions
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("acptap sessions --json: %v\n%s", err, out)
	}
	return s
}

// validStreams runs acptap validate on every ASR stream of the store.
func validStreams(t *testing.T, store string) []string {
	t.Helper()
	streams, _ := filepath.Glob(filepath.Join(store, "sessions", "*", "*.asr.jsonl"))
	if len(streams) == 0 {
		t.Fatal("no ASR stream in the store")
	}
	for _, s := range streams {
		if out, errs, code := run(t, "validate", s); code != 0 {
			t.Errorf("acptap validate %s: exit %d\n%s%s", s, code, out, errs)
		}
	}
	return streams
}

// finished reports whether the recording's end was logged (acptap was not
// killed before it could finish).
func finished(t *testing.T, store string) bool {
	b, _ := os.ReadFile(filepath.Join(store, "logs", "acptap.log"))
	return strings.Contains(string(b), `"recording finished"`)
}
