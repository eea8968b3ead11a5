package config

import (
	"maps"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// AgentFor returns the settings for an agent command and the agents key
// that matched: a key matches when it equals the base name of the
// command's program, when as a path.Match pattern it matches that base
// name, or when it matches the whole command line (its words joined by
// spaces) as a glob whose * matches any characters, slashes included, and
// ? any one. Keys are tried in sorted order; the first match wins. ok is
// false when none matches.
func (c *Config) AgentFor(command []string) (a AgentConfig, key string, ok bool) {
	if len(command) == 0 {
		return AgentConfig{}, "", false
	}
	base := filepath.Base(command[0])
	line := strings.Join(command, " ")
	for _, k := range slices.Sorted(maps.Keys(c.Agents)) {
		if k == base {
			return c.Agents[k], k, true
		}
		if m, _ := path.Match(k, base); m {
			return c.Agents[k], k, true
		}
		if lineGlob(k).MatchString(line) {
			return c.Agents[k], k, true
		}
	}
	return AgentConfig{}, "", false
}

// lineGlob turns a pattern into a regexp over a whole command line.
func lineGlob(pat string) *regexp.Regexp {
	q := regexp.QuoteMeta(pat)
	q = strings.ReplaceAll(q, `\*`, ".*")
	q = strings.ReplaceAll(q, `\?`, ".")
	return regexp.MustCompile("^" + q + "$")
}
