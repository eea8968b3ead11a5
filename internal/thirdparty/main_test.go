package thirdparty

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acptap/acptap/internal/testpeers"
)

// acptapBin is the acptap binary the tests run (built once, in TestMain,
// when a test that needs it runs).
var (
	acptapBin string
	buildErr  error
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testpeers.Selected("TestAcpx") || testpeers.Selected("TestClaudeAgentACP") {
		dir, err := os.MkdirTemp("", "acptap-thirdparty-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		acptapBin, buildErr = testpeers.Build(dir)
		code := m.Run()
		os.RemoveAll(dir)
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// peersDir returns testdata/thirdparty with its npm packages installed, or
// skips the test saying how to install them (in CI, a missing package is a
// failure: `make test` installs them).
func peersDir(t *testing.T, bin string) string {
	t.Helper()
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	dir := filepath.Join(testpeers.ModuleRoot(t), "testdata", "thirdparty")
	skip := t.Skipf
	if os.Getenv("CI") == "true" {
		skip = t.Fatalf
	}
	if _, err := exec.LookPath("node"); err != nil {
		skip("node is not on PATH: the tests against third-party ACP software (testdata/thirdparty) cannot run")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", bin)); err != nil {
		skip("%s is not installed: run `make node-deps` (cd testdata/thirdparty && npm ci)", filepath.Join(dir, "node_modules", bin))
	}
	return dir
}

// run runs acptap with args and returns its stdout, stderr and exit code.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(acptapBin, args...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("acptap %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}
