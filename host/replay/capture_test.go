package replay

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/acptap/acptap/host/store"
)

// TestWireDirs: a stream in a store looks in that store's wire directory
// first, then beside itself, then in the configured store's.
func TestWireDirs(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	p := st.StreamPath("s1")
	want := []string{store.WireDir(st.Root()), filepath.Dir(p), store.WireDir(other)}
	if got := WireDirs(p, other); !slices.Equal(got, want) {
		t.Errorf("WireDirs = %v, want %v", got, want)
	}
	loose := filepath.Join(other, "s.asr.jsonl")
	if got := WireDirs(loose, ""); !slices.Equal(got, []string{other}) {
		t.Errorf("a loose stream: %v", got)
	}
}
