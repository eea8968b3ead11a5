package ship

import (
	"os"
	"path/filepath"

	"github.com/acptap/acptap/host/store"
)

// Origins returns the stores of a central store's origins, by origin name:
// root has no sessions/ of its own and a directory per origin that has
// one (what acptap collect writes). It is nil for an ordinary store, so
// callers treat root as one.
func Origins(root string) map[string]*store.Store {
	if fi, err := os.Stat(filepath.Join(root, "sessions")); err == nil && fi.IsDir() {
		return nil
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	out := map[string]*store.Store{}
	for _, e := range entries {
		if !e.IsDir() || CheckOrigin(e.Name()) != nil {
			continue
		}
		if fi, err := os.Stat(filepath.Join(root, e.Name(), "sessions")); err == nil && fi.IsDir() {
			if o, err := store.Open(filepath.Join(root, e.Name())); err == nil {
				out[e.Name()] = o
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
