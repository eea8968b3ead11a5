package aep

import (
	"go/build"
	"strings"
	"testing"
)

// TestImportsSDKOnly: a plugin imports only the standard library, sdk/…,
// the engines under plugins/internal and the module-root internal libraries
// sdk and plugins share (never the host, nor another plugin, nor a
// third-party module).
func TestImportsSDKOnly(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		first, _, _ := strings.Cut(imp, "/")
		if strings.Contains(first, ".") && !pluginMayImport(imp) {
			t.Errorf("aep imports %s", imp)
		}
	}
}

// pluginMayImport: the module's packages a plugin may import (the rest of
// the rule, with its violation cases, is internal/depcheck's).
func pluginMayImport(imp string) bool {
	for _, p := range []string{"sdk", "plugins/internal/", "internal/acpschema", "internal/jsonscan", "internal/replay", "internal/release"} {
		if q := "github.com/acptap/acptap/" + p; imp == q || strings.HasPrefix(imp, strings.TrimSuffix(q, "/")+"/") {
			return true
		}
	}
	return false
}
