package pluginhost

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// binary is a plugin binary opened once and hashed through that open file,
// so what runs is exactly what was hashed: a file renamed or linked over
// spec.Path after the hash (a swap) does not change what starts. On Linux
// the process execs /proc/self/fd/N, the hashed file itself (what
// fexecve does). A script (#!) cannot run that way, since its interpreter
// opens the path after exec, when the descriptor is closed; it, and every
// plugin where /proc is missing, runs from a private copy (a 0700
// directory of its own) written from the same bytes that were hashed.
//
// What stays possible is writing into the hashed file itself between hash
// and exec, which needs write permission on the plugin binary; keep plugin
// binaries writable by their owner only.
type binary struct {
	f    *os.File
	sum  string
	path string // what to exec
	tmp  string // the private copy's directory, removed by close
}

// openBinary opens and hashes spec.Path and checks spec.SHA256 (when set).
func openBinary(spec Spec) (*binary, error) {
	f, err := os.Open(spec.Path)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", spec.Name, err)
	}
	b := &binary{f: aboveStdio(f)}
	if err := b.load(spec); err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

func (b *binary) load(spec Spec) error {
	st, err := b.f.Stat()
	if err != nil {
		return fmt.Errorf("plugin %s: %w", spec.Name, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("plugin %s: %s is not a regular file", spec.Name, spec.Path)
	}
	var magic [2]byte
	n, _ := io.ReadFull(b.f, magic[:])
	if _, err := b.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("plugin %s: %w", spec.Name, err)
	}
	script := n == 2 && magic == [2]byte{'#', '!'}
	byFD := fmt.Sprintf("/proc/self/fd/%d", b.f.Fd())
	h := sha256.New()
	hash := spec.SHA256 != "" || spec.Hash
	if _, serr := os.Stat(byFD); runtime.GOOS == "linux" && serr == nil && !script {
		if !hash {
			b.path = byFD
			return nil // executed by descriptor: nothing to check
		}
		if _, err := io.Copy(h, b.f); err != nil {
			return fmt.Errorf("plugin %s: %w", spec.Name, err)
		}
		b.path = byFD
	} else if err := b.copy(spec, h); err != nil {
		return err
	}
	b.sum = hex.EncodeToString(h.Sum(nil))
	if spec.SHA256 != "" && !strings.EqualFold(spec.SHA256, b.sum) {
		return fmt.Errorf("%w: plugin %s at %s has sha256 %s, configured %s", ErrChecksum, spec.Name, spec.Path, b.sum, spec.SHA256)
	}
	return nil
}

// copy writes the private copy, hashing the bytes it writes.
func (b *binary) copy(spec Spec, h io.Writer) error {
	dir, err := os.MkdirTemp("", "acptap-plugin-")
	if err != nil {
		return fmt.Errorf("plugin %s: private copy: %w", spec.Name, err)
	}
	b.tmp = dir
	path := filepath.Join(dir, filepath.Base(spec.Path))
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o700)
	if err != nil {
		return fmt.Errorf("plugin %s: private copy: %w", spec.Name, err)
	}
	_, err = io.Copy(io.MultiWriter(out, h), b.f)
	err = errors.Join(err, out.Close())
	if err != nil {
		return fmt.Errorf("plugin %s: private copy: %w", spec.Name, err)
	}
	b.path = path
	return nil
}

// close releases the descriptor and the private copy; call it once the
// process has started (exec has happened).
func (b *binary) close() {
	b.f.Close()
	if b.tmp != "" {
		os.RemoveAll(b.tmp)
	}
}
