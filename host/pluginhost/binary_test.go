package pluginhost

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestLaunchSwapLoop (issue 18, point 11): while a loop swaps the plugin
// path between the pinned binary and another file (a hard link renamed
// over it, as an attacker owning the directory would), Launch either
// refuses the other file (checksum mismatch) or runs the pinned one: the
// other file never runs. The pinned binary is a copy of true(1), which
// fails the handshake; the other one is a script that leaves a mark.
func TestLaunchSwapLoop(t *testing.T) {
	dir := t.TempDir()
	trueBin, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Skip("no /bin/true:", err)
	}
	good := filepath.Join(dir, "good")
	evil := filepath.Join(dir, "evil")
	mark := filepath.Join(dir, "ran-unverified")
	if err := os.WriteFile(good, trueBin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(evil, []byte("#!/bin/sh\ntouch '"+mark+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(trueBin)
	path := filepath.Join(dir, "acptap-plugin-swap")
	if err := os.Link(good, path); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tmp := filepath.Join(dir, "tmp")
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			src := good
			if i%2 == 1 {
				src = evil
			}
			os.Remove(tmp)
			if os.Link(src, tmp) == nil {
				os.Rename(tmp, path)
			}
		}
	}()
	spec := Spec{Name: "swap", Path: path, SHA256: hex.EncodeToString(sum[:])}
	refused, ran := 0, 0
	for i := 0; i < 100; i++ {
		_, err := Launch(context.Background(), spec, nil)
		switch {
		case err == nil:
			t.Fatal("true(1) passed the plugin handshake")
		case errors.Is(err, ErrChecksum):
			refused++
		default:
			ran++ // the pinned binary ran and failed the handshake
		}
		if _, err := os.Stat(mark); err == nil {
			close(stop)
			wg.Wait()
			t.Fatalf("try %d: the swapped-in file ran although its sha256 is not the pinned one", i+1)
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("100 tries: %d refused (checksum), %d ran the pinned binary", refused, ran)
	if ran == 0 {
		t.Error("the pinned binary never ran")
	}
}

// TestLaunchScriptPrivateCopy: a script plugin runs from a private copy of
// the hashed bytes (its interpreter cannot open /proc/self/fd/N), and the
// copy is removed once it has started.
func TestLaunchScriptPrivateCopy(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "ran")
	path := filepath.Join(dir, "acptap-plugin-script")
	script := "#!/bin/sh\necho \"$0\" > '" + mark + "'\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(script))
	_, err := Launch(context.Background(), Spec{Name: "script", Path: path, SHA256: hex.EncodeToString(sum[:])}, nil)
	if err == nil || errors.Is(err, ErrChecksum) {
		t.Fatalf("launch: %v, want a handshake failure", err)
	}
	b, err := os.ReadFile(mark)
	if err != nil {
		t.Fatalf("the script did not run: %v", err)
	}
	ran := string(b[:len(b)-1])
	if ran == path {
		t.Errorf("the script ran from its path, not from a private copy")
	}
	if _, err := os.Stat(ran); err == nil {
		t.Errorf("the private copy %s is still there", ran)
	}
}
