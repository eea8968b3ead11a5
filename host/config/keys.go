package config

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/acptap/acptap/host/store"
)

// envLeaves maps the single-underscore spelling of each fixed leaf key
// ("log_level") to its path.
var envLeaves = func() map[string][]string {
	m := map[string][]string{}
	for _, p := range leafPaths(schema, nil) {
		m[strings.Join(p, "_")] = p
	}
	return m
}()

// envSep joins the parts of an environment key for the env provider to
// unflatten; it is not '.', because revisions ("acp/2@2.0.0-alpha.9")
// contain dots.
const envSep = "\x1f"

// envKey turns ACPTAP_LOG_LEVEL into the path log.level and
// ACPTAP_PLUGINS__ACPV2__SHA256 into plugins.acpv2.sha256 (joined with
// envSep); it returns "" for single-underscore names that are not
// configuration keys.
func envKey(name, value string) (string, any) {
	key := strings.ToLower(strings.TrimPrefix(name, EnvPrefix))
	var path []string
	if strings.Contains(key, "__") {
		path = strings.Split(key, "__")
	} else if p, ok := envLeaves[key]; ok {
		path = p
	} else {
		return "", nil
	}
	switch {
	case len(path) == 1 && path[0] == "plugin_path":
		return "plugin_path", filepath.SplitList(value)
	case len(path) == 2 && path[0] == "revisions":
		var names []string
		for n := range strings.SplitSeq(value, ",") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
		return "revisions" + envSep + path[1], names
	}
	return strings.Join(path, envSep), value
}

// unknownKeys lists the keys of m (recursively) that the schema lacks.
func unknownKeys(m map[string]any, k keys, prefix []string) []string {
	var bad []string
	for name, v := range m {
		sub, ok := k[name]
		if !ok {
			sub, ok = k["*"]
		}
		p := append(slices.Clone(prefix), name)
		if !ok {
			bad = append(bad, keyPath(p...))
			continue
		}
		if vm, isMap := v.(map[string]any); isMap && sub != nil {
			bad = append(bad, unknownKeys(vm, sub, p)...)
		}
	}
	slices.Sort(bad)
	return bad
}

var bareKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// keyPath spells a key path as the TOML file would: dotted, quoting parts
// that are not bare keys (revisions."acp/1").
func keyPath(parts ...string) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('.')
		}
		if bareKey.MatchString(p) {
			b.WriteString(p)
		} else {
			b.WriteString(`"` + strings.ReplaceAll(p, `"`, `\"`) + `"`)
		}
	}
	return b.String()
}

// normalize expands "~/" with home, makes paths absolute, fills Log.File
// from Store, and lower-cases the level and checksums.
func (c *Config) normalize(home string) error {
	fix := func(p *string) error {
		if *p == "" {
			return nil
		}
		if home != "" && (*p == "~" || strings.HasPrefix(*p, "~/")) {
			*p = filepath.Join(home, (*p)[1:])
		}
		abs, err := filepath.Abs(*p)
		*p = abs
		return err
	}
	errs := []error{fix(&c.Store), fix(&c.Log.File)}
	if c.Log.File == "" && c.Store != "" {
		c.Log.File = store.LogPath(c.Store)
	}
	for i := range c.PluginPath {
		errs = append(errs, fix(&c.PluginPath[i]))
	}
	if c.Plugins == nil {
		c.Plugins = map[string]PluginConfig{}
	}
	for name, p := range c.Plugins {
		errs = append(errs, fix(&p.Path))
		p.SHA256 = strings.ToLower(p.SHA256)
		c.Plugins[name] = p
	}
	if c.Revisions == nil {
		c.Revisions = map[string][]string{}
	}
	c.Log.Level = strings.ToLower(c.Log.Level)
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
