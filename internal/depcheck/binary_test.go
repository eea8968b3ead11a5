package depcheck

import (
	"os/exec"
	"strings"
	"testing"
)

// forbiddenInBinary are modules the acptap binary must not link: a stdio
// tee watches no files (koanf's file provider brought fsnotify in for a
// watch acptap never starts; issue 17).
var forbiddenInBinary = []string{"github.com/fsnotify/fsnotify"}

// forbiddenDeps lists the deps (go list -deps lines) that are, or are
// inside, a forbidden module.
func forbiddenDeps(deps []string) []string {
	var bad []string
	for _, d := range deps {
		for _, f := range forbiddenInBinary {
			if d == f || strings.HasPrefix(d, f+"/") {
				bad = append(bad, d)
			}
		}
	}
	return bad
}

func TestBinaryDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", module+"cmd/acptap").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list -deps gave %d packages; the check would prove nothing", len(deps))
	}
	for _, d := range forbiddenDeps(deps) {
		t.Errorf("cmd/acptap depends on %s", d)
	}
}

func TestForbiddenDepsCatchesViolations(t *testing.T) {
	bad := forbiddenDeps([]string{"os", "github.com/fsnotify/fsnotify/internal", "github.com/knadh/koanf/v2", "github.com/fsnotify/fsnotify"})
	if len(bad) != 2 {
		t.Errorf("caught %q, want both fsnotify packages", bad)
	}
	if bad := forbiddenDeps([]string{"github.com/fsnotify/fsnotifyx"}); len(bad) != 0 {
		t.Errorf("caught %q, a different module", bad)
	}
}
