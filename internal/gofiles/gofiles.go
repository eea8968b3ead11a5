// Package gofiles walks the module's own Go source for the tests that grep
// it (a literal that must be written once, a mode that must come from one
// place): the non-test .go files below a root, skipping hidden
// directories, testdata and node_modules. Only tests import it.
package gofiles

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Walk calls fn with the slash-separated path relative to root and the
// content of each non-test .go file below root. skip, when not nil, leaves
// out a directory (dir true) or file by that path. It returns how many
// files fn saw, so a caller can tell a walk that found nothing.
func Walk(root string, skip func(rel string, dir bool) bool, fn func(rel string, src []byte) error) (int, error) {
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "." {
				return nil
			}
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules" || (skip != nil && skip(rel, true)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || (skip != nil && skip(rel, false)) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		return fn(rel, b)
	})
	return n, err
}
