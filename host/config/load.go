package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/acptap/acptap/host/store"
	"github.com/knadh/koanf/parsers/toml/v2"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/v2"
	gotoml "github.com/pelletier/go-toml/v2"
)

// EnvPrefix starts every environment variable Load reads.
const EnvPrefix = "ACPTAP_"

// LoadOptions says where Load finds its layers.
type LoadOptions struct {
	// File is a config file that must exist (--config). Empty means the
	// default file, $XDG_CONFIG_HOME/acptap/config.toml (else
	// ~/.config/acptap/config.toml), which may be missing.
	File string
	// Flags are the command line's settings, keyed by dotted path
	// ("store", "log.level"); they override every other layer.
	Flags map[string]any
	// Env is the environment as KEY=VALUE lines; nil means os.Environ().
	Env []string
	// Builtins names the plugins compiled into the host (for Validate).
	Builtins []string
}

// Load merges defaults, the config file, the environment and flags, in
// that order, into a Config; resolves relative paths against the current
// directory; fills Log.File from Store when unset; and validates the result.
//
// Unknown keys in the file or flags are an error naming them. In the
// environment, ACPTAP_<KEY> names a top-level or fixed nested key with
// single underscores (ACPTAP_LOG_LEVEL → log.level), and a double
// underscore nests explicitly (ACPTAP_PLUGINS__ACPV2__SHA256 →
// plugins.acpv2.sha256; keys are lower-cased). Unknown single-underscore
// variables are ignored — other parts of acptap use the prefix too — but an
// unknown double-underscore path is an error. ACPTAP_PLUGIN_PATH is a
// path list; ACPTAP_REVISIONS__<REV> is a comma-separated list.
func Load(opts LoadOptions) (*Config, error) {
	environ := opts.Env
	if environ == nil {
		environ = os.Environ()
	}
	getenv := lookup(environ)
	root, _ := store.DefaultRoot(getenv) // no HOME: Validate reports store
	k := koanf.New(".")
	if err := k.Load(confmap.Provider(defaults(root, opts.Builtins), ""), nil); err != nil {
		return nil, fmt.Errorf("load defaults: %w", err)
	}
	if err := loadFile(k, opts.File, getenv); err != nil {
		return nil, err
	}
	envMap, err := env.Provider(envSep, env.Opt{
		Prefix:        EnvPrefix,
		TransformFunc: envKey,
		EnvironFunc:   func() []string { return environ },
	}).Read()
	if err != nil {
		return nil, fmt.Errorf("load environment: %w", err)
	}
	if err := mergeChecked(k, envMap, "environment ("+EnvPrefix+"…)"); err != nil {
		return nil, err
	}
	flags, _ := confmap.Provider(opts.Flags, ".").Read()
	if err := mergeChecked(k, flags, "flags"); err != nil {
		return nil, err
	}
	c := &Config{}
	if err := decode(k, c); err != nil {
		return nil, err
	}
	c.Builtins = opts.Builtins
	c.File = opts.File
	if err := c.normalize(getenv("HOME")); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// loadFile merges the TOML file: the named one, which must exist, or the
// default one if it exists.
func loadFile(k *koanf.Koanf, path string, getenv func(string) string) error {
	if path == "" {
		path = defaultFile(getenv)
		if path == "" {
			return nil
		}
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil
		}
	}
	// Read, not koanf's file provider: it brings fsnotify (for a watch a
	// stdio tee never starts) into the binary; the parser is koanf's.
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	m, err := toml.Parser().Unmarshal(b)
	if err != nil {
		var de *gotoml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return fmt.Errorf("config file %s:%d:%d: %w", path, row, col, err)
		}
		return fmt.Errorf("config file %s: %w", path, err)
	}
	return mergeChecked(k, m, "config file "+path)
}

// defaultFile is $XDG_CONFIG_HOME/acptap/config.toml, else
// ~/.config/acptap/config.toml, else "".
func defaultFile(getenv func(string) string) string {
	if d := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "acptap", "config.toml")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "acptap", "config.toml")
	}
	return ""
}

// mergeChecked rejects unknown keys in m, then merges it over k.
func mergeChecked(k *koanf.Koanf, m map[string]any, source string) error {
	if bad := unknownKeys(m, schema, nil); len(bad) > 0 {
		return fmt.Errorf("%s: unknown key(s) %s", source, strings.Join(bad, ", "))
	}
	if err := k.Load(confmap.Provider(m, ""), nil); err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	return nil
}

// lookup builds a getenv over KEY=VALUE lines (the last one wins).
func lookup(environ []string) func(string) string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return func(k string) string { return m[k] }
}
