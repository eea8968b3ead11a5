package aep

import (
	"go/build"
	"strings"
	"testing"
)

// TestImportsSDKOnly: a plugin imports only the standard library and sdk/…
// (never the host).
func TestImportsSDKOnly(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		first, _, _ := strings.Cut(imp, "/")
		if strings.Contains(first, ".") && !strings.HasPrefix(imp, "github.com/acptap/acptap/sdk") {
			t.Errorf("aep imports %s", imp)
		}
	}
}
