package aepe2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acptap/acptap/internal/testpeers"
	"github.com/acptap/acptap/sdk/aep"
	"github.com/acptap/acptap/sdk/aep/aepcheck"
)

// acptapBin is the acptap binary TestMain builds once.
var acptapBin string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "acptap-aepe2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "aepe2e:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	if acptapBin, err = testpeers.Build(tmp); err != nil {
		fmt.Fprintln(os.Stderr, "aepe2e:", err)
		return 1
	}
	// The subprocesses see only the tests' configuration.
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "ACPTAP_") || k == "AEP_ACP_DELTAS" {
			os.Unsetenv(k)
		}
	}
	for _, k := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME"} {
		d := filepath.Join(tmp, strings.ToLower(k))
		if err := os.MkdirAll(d, 0o700); err != nil {
			fmt.Fprintln(os.Stderr, "aepe2e:", err)
			return 1
		}
		os.Setenv(k, d)
	}
	return m.Run()
}

// record returns the agent argv that runs the SDK agent script through
// `acptap record` into store, with extra environment.
func record(t *testing.T, store, agentScript string, env ...string) []string {
	t.Helper()
	argv := append([]string{"env"}, env...)
	argv = append(argv, acptapBin, "record", "--store", store, "--")
	return append(argv, testpeers.NodeArgv(t, agentScript)...)
}

// readLines reads a JSONL file's lines.
func readLines(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		out = append(out, append([]byte(nil), sc.Bytes()...))
	}
	return out
}

// event is the part of an AEP event the tests look at.
type event struct {
	Type    string         `json:"type"`
	ID      string         `json:"id"`
	Session string         `json:"session"`
	Run     string         `json:"run"`
	Seq     int64          `json:"seq"`
	Epoch   int64          `json:"epoch"`
	Data    map[string]any `json:"data"`
}

// checkAEPLog validates every line of an AEP JSONL log against the AEP
// schemas and the stream rules — (epoch, seq) strictly increasing per
// session, one terminal per run, one session.ended, no dangling attention,
// unique ids — and returns the events.
func checkAEPLog(t *testing.T, path string) []event {
	t.Helper()
	v, err := aepcheck.DefaultValidator()
	if err != nil {
		t.Fatal(err)
	}
	var s aep.Stream
	var out []event
	for i, line := range readLines(t, path) {
		h, err := v.Validate(line)
		if err != nil {
			t.Errorf("%s line %d is not a valid AEP event: %v\n%s", filepath.Base(path), i+1, err, line)
			continue
		}
		canon, _ := aep.CanonicalRaw(line)
		if err := s.Admit(h, canon); err != nil {
			if errors.Is(err, aep.Duplicate) {
				err = fmt.Errorf("the same event twice")
			}
			t.Errorf("%s line %d: %v\n%s", filepath.Base(path), i+1, err, line)
		}
		var e event
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		t.Fatalf("%s holds no events", path)
	}
	return out
}

func countTypes(evs []event) map[string]int {
	n := map[string]int{}
	for _, e := range evs {
		n[e.Type]++
	}
	return n
}
