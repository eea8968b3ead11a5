package store

import (
	"path/filepath"
	"testing"
)

// TestRootOf: a session file's store root is found by the layout
// StreamPath makes; a path laid out otherwise has none.
func TestRootOf(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{st.StreamPath("s/1"), st.PluginStreamPath("s1", "acpv1")} {
		if root, ok := RootOf(p); !ok || root != st.Root() {
			t.Errorf("RootOf(%s) = %s, %v; want %s", p, root, ok, st.Root())
		}
	}
	if root, ok := RootOf(filepath.Join(t.TempDir(), "loose", "stream.asr.jsonl")); ok {
		t.Errorf("a loose stream has store root %s", root)
	}
	if got, want := filepath.Dir(st.WirePath("c-1")), WireDir(st.Root()); got != want {
		t.Errorf("WirePath is under %s, WireDir says %s", got, want)
	}
}
