package asr

import (
	"go/build"
	"strings"
	"testing"
)

// allowedModules are the only non-standard packages sdk/asr may import:
// internal/jsonscan and internal/jsonl, which import the standard library
// only (checked below). The JSON Schema validator is asrcheck's, not the model's.
var allowedModules = []string{"github.com/acptap/acptap/internal/jsonscan", "github.com/acptap/acptap/internal/jsonl"}

// TestImportsStdlibOnly keeps the model free of host and third-party
// imports (but allowedModules), so every plugin and tool can use it.
func TestImportsStdlibOnly(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if allowed(imp) {
			continue
		}
		if first, _, _ := strings.Cut(imp, "/"); strings.Contains(first, ".") {
			t.Errorf("sdk/asr imports %s", imp)
		}
	}
}

// TestJSONScanImportsStdlibOnly: what sdk/asr allows of internal/jsonscan
// brings no other import with it.
func TestJSONScanImportsStdlibOnly(t *testing.T) {
	pkg, err := build.ImportDir("../../internal/jsonscan", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if first, _, _ := strings.Cut(imp, "/"); strings.Contains(first, ".") {
			t.Errorf("internal/jsonscan imports %s", imp)
		}
	}
}

func allowed(imp string) bool {
	for _, m := range allowedModules {
		if imp == m || strings.HasPrefix(imp, m+"/") {
			return true
		}
	}
	return false
}
