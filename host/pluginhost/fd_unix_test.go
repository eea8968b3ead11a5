//go:build unix

package pluginhost

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAboveStdio: a binary opened while descriptor 0 is free (acptap's
// stdin or stdout released) lands on 0; aboveStdio moves it to 3 or more,
// so /proc/self/fd/N still names the binary in the plugin's child, whose
// 0–2 are its own. Descriptor 0 of the test process stands in for it.
func TestAboveStdio(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(path, []byte("the binary"), 0o600); err != nil {
		t.Fatal(err)
	}
	saved, err := unix.Dup(0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = unix.Dup2(saved, 0); _ = unix.Close(saved) }()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Dup2(int(f.Fd()), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	low := os.NewFile(0, path)
	g := aboveStdio(low)
	if g.Fd() <= 2 {
		t.Fatalf("aboveStdio left the binary on descriptor %d", g.Fd())
	}
	defer g.Close()
	b, err := io.ReadAll(g)
	if err != nil || string(b) != "the binary" {
		t.Fatalf("the moved descriptor reads %q, %v", b, err)
	}
	if h := aboveStdio(g); h != g {
		t.Error("a descriptor above 2 was moved")
	}
}
