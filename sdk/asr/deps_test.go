package asr

import (
	"go/build"
	"strings"
	"testing"
)

// TestImportsStdlibOnly keeps the model free of host and third-party
// imports, so every plugin and tool can use it.
func TestImportsStdlibOnly(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if first, _, _ := strings.Cut(imp, "/"); strings.Contains(first, ".") {
			t.Errorf("sdk/asr imports %s", imp)
		}
	}
}
