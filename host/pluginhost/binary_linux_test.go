package pluginhost

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenBinaryHashesOnlyWhenAsked: a binary with no pinned checksum is executed by its
// descriptor without being read through (no sum); asked (Spec.Hash, as acptap plugins
// does) or pinned, its sha256 is computed and, pinned, checked.
func TestOpenBinaryHashesOnlyWhenAsked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plugin")
	data := []byte("\x7fELF not really a plugin, but a regular file")
	if err := os.WriteFile(path, data, 0o700); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	want := hex.EncodeToString(sum[:])
	for _, tc := range []struct {
		spec Spec
		sum  string
	}{
		{Spec{Name: "p", Path: path}, ""},
		{Spec{Name: "p", Path: path, Hash: true}, want},
		{Spec{Name: "p", Path: path, SHA256: want}, want},
	} {
		b, err := openBinary(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		if b.sum != tc.sum || !strings.HasPrefix(b.path, "/proc/self/fd/") {
			t.Errorf("%+v: sum %q, path %q; want sum %q, executed by descriptor", tc.spec, b.sum, b.path, tc.sum)
		}
		b.close()
	}
}

// BenchmarkOpenBinary: what a plugin launch spends opening acptap's own binary (a built-in
// plugin's) with and without hashing it.
func BenchmarkOpenBinary(b *testing.B) {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	for _, hash := range []bool{false, true} {
		name := "nohash"
		if hash {
			name = "hash"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				bin, err := openBinary(Spec{Name: "self", Path: self, Hash: hash})
				if err != nil {
					b.Fatal(err)
				}
				bin.close()
			}
		})
	}
}
