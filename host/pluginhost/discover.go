package pluginhost

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ExternalPrefix starts the file name of every external plugin binary.
const ExternalPrefix = "acptap-plugin-"

// PluginModeEnv is set, with the plugin's name, when the acptap binary is
// re-executed to serve a built-in plugin.
const PluginModeEnv = "ACPTAP_BUILTIN_PLUGIN"

// ErrNotFound means no built-in or external plugin has the name.
var ErrNotFound = errors.New("plugin not found")

// ErrChecksum means a plugin binary does not match its configured sha256.
var ErrChecksum = errors.New("plugin checksum mismatch")

// Spec says how to start one plugin.
type Spec struct {
	Name string
	// Builtin plugins run as Self with PluginModeEnv=Name.
	Builtin bool
	// Path is the binary: an external plugin's, or the acptap binary.
	Path string
	// SHA256 is the configured checksum (hex); empty means not pinned.
	SHA256 string
	// Hash asks for the binary's sha256 (Instance.SHA256) when none is pinned too
	// (acptap plugins shows it); a launch with neither does not read the binary through
	// (about 20 ms of CPU for acptap's own binary, at every connection's start).
	Hash bool
	// Config is the plugin's own configuration section as JSON.
	Config []byte
}

// Catalog resolves plugin names.
type Catalog struct {
	// Self is the acptap binary (os.Executable()).
	Self string
	// Builtins are the names the acptap binary serves in plugin mode.
	Builtins []string
	// PluginPath is searched in order for acptap-plugin-<name>.
	PluginPath []string
	// Paths pins a plugin's binary explicitly (config plugins.<name>.path).
	Paths map[string]string
	// Checksums are the configured sha256 per plugin (config plugins.<name>.sha256).
	Checksums map[string]string
	// Configs are the plugins' own configuration sections as JSON.
	Configs map[string][]byte
}

// Resolve finds a plugin by name. An explicit path wins, then the plugin
// path (so a user can shadow a built-in), then the built-ins.
func (c *Catalog) Resolve(name string) (Spec, error) {
	spec := Spec{Name: name, SHA256: c.Checksums[name], Config: c.Configs[name]}
	if p := c.Paths[name]; p != "" {
		spec.Path = p
		return spec, nil
	}
	for _, dir := range c.PluginPath {
		p := filepath.Join(dir, ExternalPrefix+name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			spec.Path = p
			return spec, nil
		}
	}
	for _, b := range c.Builtins {
		if b == name {
			spec.Builtin, spec.Path = true, c.Self
			return spec, nil
		}
	}
	return spec, fmt.Errorf("%w: %q is not built in and no %s%s is on the plugin path %v", ErrNotFound, name, ExternalPrefix, name, c.PluginPath)
}

// All lists every plugin name the catalog can resolve: the built-ins and
// the external binaries on the plugin path, sorted.
func (c *Catalog) All() []string {
	seen := map[string]bool{}
	for _, b := range c.Builtins {
		seen[b] = true
	}
	for n := range c.Paths {
		seen[n] = true
	}
	for _, dir := range c.PluginPath {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if n, ok := strings.CutPrefix(e.Name(), ExternalPrefix); ok && n != "" {
				seen[n] = true
			}
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// FileSHA256 returns the hex sha256 of a file.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Verify checks the binary against the configured checksum, when one is
// set, and returns its sha256. Launch does not call it: it hashes and
// executes one open file (see binary).
func (s Spec) Verify() (sum string, err error) {
	s.Hash = true
	b, err := openBinary(s)
	if err != nil {
		return "", err
	}
	b.close()
	return b.sum, nil
}
