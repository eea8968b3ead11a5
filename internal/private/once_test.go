package private

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// modeUses are the ways a private mode or directory gets written by hand
// instead of through this package.
var modeUses = regexp.MustCompile(`\b0o?[67]00\b|os\.MkdirAll\(|\bstore\.(MkdirPrivate|FileMode|DirMode)\b|\bwire\.(FileMode|DirMode)\b`)

var quoted = regexp.MustCompile(`"(\\.|[^"\\])*"`)

// modeAllowed are the files that may: the plugin host's private copy of a
// plugin binary is an executable (0700 is rwx, not a directory mode), and
// the store names the deprecated aliases it keeps for other branches.
var modeAllowed = map[string]bool{
	"host/pluginhost/binary.go": true,
	"host/store/store.go":       true,
}

// TestModesWrittenOnce fails when a package outside this one writes 0600,
// 0700 or a MkdirAll of its own (the grep test tailscale keeps for its own
// invariants): every private file and directory goes through package
// private. Tests, test peers, examples and benchmarks are not the product
// and are not checked.
func TestModesWrittenOnce(t *testing.T) {
	root := filepath.Join("..", "..")
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch {
			case rel == ".":
				return nil
			case rel == "testdata", rel == "examples", rel == "bench", strings.HasPrefix(rel, "."),
				strings.HasSuffix(rel, "/testdata"), rel == "internal/private", rel == "internal/testpeers":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || modeAllowed[rel] {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		for i, line := range strings.Split(string(b), "\n") {
			code := quoted.ReplaceAllString(line, `""`) // help text may name the modes
			code, _, _ = strings.Cut(code, "//")
			if m := modeUses.FindString(code); m != "" {
				t.Errorf("%s:%d: %s: use package private (internal/private)", rel, i+1, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked only %d files; the walk proves nothing", checked)
	}
}

func TestModeUsesPattern(t *testing.T) {
	for _, bad := range []string{`os.OpenFile(p, f, 0o600)`, `os.Mkdir(d, 0700)`, `os.MkdirAll(d, m)`, `store.MkdirPrivate(d)`, `x := store.FileMode`} {
		if !modeUses.MatchString(bad) {
			t.Errorf("%q is not caught", bad)
		}
	}
	for _, ok := range []string{`private.OpenFile(p, f)`, `0o6000`, `n := 600`} {
		if modeUses.MatchString(ok) {
			t.Errorf("%q is caught", ok)
		}
	}
}
