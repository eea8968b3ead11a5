package store

import "path/filepath"

// WireDir is <root>/wire, where WirePath puts a store's wire logs.
func WireDir(root string) string { return filepath.Join(root, "wire") }

// RootOf returns the root of the store a session file sits in, by the
// layout SessionDir makes (<root>/sessions/<escaped id>/<file>), or false
// when the path is not laid out so.
func RootOf(sessionFile string) (string, bool) {
	abs, err := filepath.Abs(sessionFile)
	if err != nil {
		return "", false
	}
	sessions := filepath.Dir(filepath.Dir(abs))
	if filepath.Base(sessions) != "sessions" {
		return "", false
	}
	return filepath.Dir(sessions), true
}
