package private

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/acptap/acptap/internal/gofiles"
)

// modeUses are the ways a private mode or directory gets written by hand
// instead of through this package.
var modeUses = regexp.MustCompile(`\b0o?[67]00\b|os\.MkdirAll\(|\bstore\.(MkdirPrivate|FileMode|DirMode)\b|\bwire\.(FileMode|DirMode)\b`)

var quoted = regexp.MustCompile(`"(\\.|[^"\\])*"`)

// modeAllowed are the files that may: the plugin host's private copy of a
// plugin binary is an executable (0700 is rwx, not a directory mode).
var modeAllowed = map[string]bool{
	"host/pluginhost/binary.go": true,
}

// TestModesWrittenOnce fails when a package outside this one writes 0600,
// 0700 or a MkdirAll of its own (the grep test tailscale keeps for its own
// invariants): every private file and directory goes through package
// private. Tests, test peers, examples and benchmarks are not the product
// and are not checked.
func TestModesWrittenOnce(t *testing.T) {
	skip := func(rel string, dir bool) bool {
		if dir {
			return rel == "examples" || rel == "bench" || rel == "internal/private" || rel == "internal/testpeers"
		}
		return modeAllowed[rel]
	}
	checked, err := gofiles.Walk(filepath.Join("..", ".."), skip, func(rel string, src []byte) error {
		for i, line := range strings.Split(string(src), "\n") {
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
