package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/acptap/acptap/internal/testpeers"
)

// Binaries built once by TestMain.
var (
	acptapBin string // the acptap binary
	acmeBin   string // examples/acme-plugin (to be copied in as acptap-plugin-acme)
	faultyBin string // testdata/faultyplugin (to be copied in as acptap-plugin-<name>)
	selfBin   string // this test binary, re-executed as helper agents
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if runtime.GOOS != "linux" {
		fmt.Println("e2e: these tests need Linux (/proc, Pdeathsig); skipped")
		return 0
	}
	tmp, err := os.MkdirTemp("", "acptap-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	if err := build(tmp); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	// Every subprocess gets an empty config home and data home, and none of
	// the developer's ACPTAP_ settings: the tests see only their own config.
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "ACPTAP_") {
			os.Unsetenv(k)
		}
	}
	for _, k := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME"} {
		d := filepath.Join(tmp, strings.ToLower(k))
		if err := os.MkdirAll(d, 0o700); err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
			return 1
		}
		os.Setenv(k, d)
	}
	return m.Run()
}

// build compiles the binaries: acptap and the faulty plugin with one go
// build (they share the work), the acme plugin in its own module.
func build(tmp string) error {
	out := filepath.Join(tmp, "bin")
	var err error
	if acptapBin, err = testpeers.Build(out, "./cmd/acptap", "./internal/e2e/testdata/faultyplugin"); err != nil {
		return err
	}
	if acmeBin, err = testpeers.BuildModule(out, "examples/acme-plugin"); err != nil {
		return err
	}
	faultyBin = filepath.Join(out, "faultyplugin")
	selfBin, err = os.Executable()
	return err
}
