package otlpe2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acptap/acptap/internal/testpeers"
)

var acptapBin string

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "acptap-otlpe2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "otlpe2e:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	if acptapBin, err = testpeers.Build(tmp); err != nil {
		fmt.Fprintln(os.Stderr, "otlpe2e:", err)
		return 1
	}
	// The subprocesses see only the tests' configuration.
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "ACPTAP_") || strings.HasPrefix(k, "OTEL_") {
			os.Unsetenv(k)
		}
	}
	for _, k := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME"} {
		d := filepath.Join(tmp, strings.ToLower(k))
		if err := os.MkdirAll(d, 0o700); err != nil {
			fmt.Fprintln(os.Stderr, "otlpe2e:", err)
			return 1
		}
		os.Setenv(k, d)
	}
	return m.Run()
}
