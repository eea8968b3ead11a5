package testpeers

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// GoTool is the go command of the toolchain running the tests (the one in
// GOROOT, else "go" from PATH).
func GoTool() string {
	// The test binary was built on this machine by the toolchain running
	// the tests, so its GOROOT is meaningful here, and it is that
	// toolchain (not whatever "go" PATH finds) that should build.
	//lint:ignore SA1019 see above
	if g := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(g) {
		return g
	}
	return "go"
}

// Build builds the module's packages (default ./cmd/acptap) into dir and
// returns the path of the first one's binary (dir/acptap for
// ./cmd/acptap). It finds the module root from the working directory, so
// a TestMain can call it before any test has a *testing.T.
func Build(dir string, pkgs ...string) (string, error) {
	if len(pkgs) == 0 {
		pkgs = []string{"./cmd/acptap"}
	}
	root, err := moduleRootFromWD()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	out := filepath.Join(dir, filepath.Base(pkgs[0]))
	target := out
	if len(pkgs) > 1 {
		target = dir + string(filepath.Separator) // several packages: -o names the directory
	}
	cmd := exec.Command(GoTool(), append([]string{"build", "-o", target}, pkgs...)...)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %v: %v\n%s", pkgs, err, b)
	}
	return out, nil
}

// BuildModule builds the main package at the root of a nested module (a
// directory of this repository with its own go.mod, such as
// examples/acme-plugin, which the root module's packages do not include)
// into dir and returns the binary's path (dir/<base of moduleDir>).
func BuildModule(dir, moduleDir string) (string, error) {
	root, err := moduleRootFromWD()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	out := filepath.Join(dir, filepath.Base(moduleDir))
	cmd := exec.Command(GoTool(), "build", "-o", out, ".")
	cmd.Dir = filepath.Join(root, filepath.FromSlash(moduleDir))
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build in %s: %v\n%s", moduleDir, err, b)
	}
	return out, nil
}

// moduleRootFromWD walks up from the working directory (go test runs in
// the package directory) to this module's go.mod.
func moduleRootFromWD() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(b, []byte("module "+modulePath+"\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testpeers: the go.mod of " + modulePath + " is not above the working directory")
		}
		dir = parent
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Selected says whether a top-level test of this name runs in this
// invocation (not -short, and matched by -run's first part), so that a
// TestMain builds what only that test needs when it will run.
func Selected(name string) bool {
	if testing.Short() {
		return false
	}
	f := flag.Lookup("test.run")
	if f == nil || f.Value.String() == "" {
		return true
	}
	top, _, _ := strings.Cut(f.Value.String(), "/")
	ok, err := regexp.MatchString(top, name)
	return err != nil || ok
}

// RunBuilding is a TestMain body for packages whose one binary-driven
// test is named test: when that test will run, it builds acptap into a
// temporary directory first (into *bin, or the failure into *buildErr, for
// the test to report), then runs the tests.
func RunBuilding(m *testing.M, test string, bin *string, buildErr *error) int {
	flag.Parse()
	if Selected(test) {
		dir, err := os.MkdirTemp("", "acptap-test-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		*bin, *buildErr = Build(dir)
	}
	return m.Run()
}
