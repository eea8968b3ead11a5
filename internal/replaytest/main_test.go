package replaytest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/acptap/acptap/internal/testpeers"
)

// Built once by TestMain.
var (
	acptapBin string // the acptap binary
	tmpRoot   string // scratch space shared by the tests (stores built once)
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		fmt.Println("replaytest: these tests need a Unix; skipped")
		return 0
	}
	tmp, err := os.MkdirTemp("", "acptap-replaytest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "replaytest:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	tmpRoot = tmp
	if acptapBin, err = testpeers.Build(filepath.Join(tmp, "bin")); err != nil {
		fmt.Fprintln(os.Stderr, "replaytest:", err)
		return 1
	}
	// The subprocesses see only the tests' configuration.
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "ACPTAP_") {
			os.Unsetenv(k)
		}
	}
	for _, k := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME"} {
		d := filepath.Join(tmp, strings.ToLower(k))
		if err := os.MkdirAll(d, 0o700); err != nil {
			fmt.Fprintln(os.Stderr, "replaytest:", err)
			return 1
		}
		os.Setenv(k, d)
	}
	return m.Run()
}
