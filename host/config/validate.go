package config

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Levels are the accepted log levels, most verbose first.
var Levels = []string{"trace", "debug", "info", "warn", "error"}

var (
	pluginName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
	sha256Hex  = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)
)

// Validate checks c and returns every problem found, each naming its key
// (for example `log.level: "loud" is not one of trace, debug, info, warn,
// error`), joined with errors.Join; nil when c is usable.
func (c *Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{key}, args...)...))
	}
	if c.Store == "" {
		bad("store", "not set, and neither XDG_DATA_HOME nor HOME is set")
	}
	if !slices.Contains(Levels, c.Log.Level) {
		bad("log.level", "%q is not one of %s", c.Log.Level, strings.Join(Levels, ", "))
	}
	if !c.Log.Stderr && c.Log.File == "" {
		bad("log.file", "not set, and log.stderr is false")
	}
	for i, dir := range c.PluginPath {
		if dir == "" {
			bad(fmt.Sprintf("plugin_path[%d]", i), "empty directory")
		}
	}
	if c.Tee.QueueFrames < 1 {
		bad("tee.queue_frames", "must be at least 1, got %d", c.Tee.QueueFrames)
	}
	if c.Tee.QueueBytes < MinQueueBytes {
		bad("tee.queue_bytes", "must be at least %d (one read), got %d", MinQueueBytes, c.Tee.QueueBytes)
	}
	if c.Tee.BatchFrames < 1 || c.Tee.BatchFrames > max(c.Tee.QueueFrames, 1) {
		bad("tee.batch_frames", "must be between 1 and tee.queue_frames (%d), got %d",
			c.Tee.QueueFrames, c.Tee.BatchFrames)
	}
	if c.Tee.Coalesce < 0 || c.Tee.Coalesce > MaxCoalesce {
		bad("tee.coalesce", "must be between 0s and %s, got %s", MaxCoalesce, c.Tee.Coalesce)
	}
	if c.Tee.PluginWindow < 0 || c.Tee.PluginWindow > MaxPluginWindow {
		bad("tee.plugin_window", "must be between 0s and %s, got %s", MaxPluginWindow, c.Tee.PluginWindow)
	}
	if c.Restart.Max < 0 {
		bad("restart.max", "must not be negative, got %d", c.Restart.Max)
	}
	if c.Restart.StallTimeout < 0 {
		bad("restart.stall_timeout", "must not be negative, got %s", c.Restart.StallTimeout)
	}
	if c.SchemaRevision == "" {
		bad("schema_revision", "not set")
	}
	if msg := relayURLProblem(c.AEP.Relay); msg != "" {
		bad("aep.relay", "%s", msg)
	}
	if c.AEP.RelayQueue < 1 {
		bad("aep.relay_queue", "must be at least 1, got %d", c.AEP.RelayQueue)
	}
	if c.AEP.RelayFlush < 0 {
		bad("aep.relay_flush", "must not be negative, got %s", c.AEP.RelayFlush)
	}
	c.validateOTLP(bad)
	c.Ship.validate(bad)
	for _, name := range slices.Sorted(maps.Keys(c.Plugins)) {
		p := c.Plugins[name]
		if !pluginName.MatchString(name) {
			bad(keyPath("plugins", name), "plugin names must match %s", pluginName)
		}
		if p.SHA256 != "" && !sha256Hex.MatchString(p.SHA256) {
			bad(keyPath("plugins", name, "sha256"), "not 64 hex digits")
		}
	}
	for _, pat := range slices.Sorted(maps.Keys(c.Agents)) {
		if _, err := path.Match(pat, ""); err != nil || pat == "" {
			bad(keyPath("agents", pat), "not a pattern: %v", err)
		}
		if c.Agents[pat].SchemaRevision == "" {
			bad(keyPath("agents", pat, "schema_revision"), "empty")
		}
	}
	for _, rev := range slices.Sorted(maps.Keys(c.Revisions)) {
		key := keyPath("revisions", rev)
		if rev == "" {
			bad(key, "empty input revision")
		}
		for _, name := range c.Revisions[rev] {
			if msg := c.unresolvable(name); msg != "" {
				bad(key, "plugin %q %s", name, msg)
			}
		}
	}
	return errors.Join(errs...)
}

// relayURLProblem says what is wrong with an AEP relay base URL, or ""
// (an empty URL turns the HTTP binding off).
func relayURLProblem(s string) string {
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Sprintf("%q is not a URL", s)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Sprintf("%q: the scheme must be http or https", s)
	case u.Host == "":
		return fmt.Sprintf("%q has no host", s)
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return fmt.Sprintf("%q: a base URL has no user, query or fragment", s)
	}
	return ""
}

// unresolvable says why a plugin named by a revision cannot be found, or ""
// when it can be (or might be: a plugin path is searched only at start).
func (c *Config) unresolvable(name string) string {
	switch {
	case !pluginName.MatchString(name):
		return "is not a valid plugin name (" + pluginName.String() + ")"
	case slices.Contains(c.Builtins, name), c.Plugins[name].Path != "", len(c.PluginPath) > 0:
		return ""
	}
	return fmt.Sprintf("is not configured: it is not built in, %s is not set, and plugin_path is empty",
		keyPath("plugins", name, "path"))
}

// validateOTLP checks the [otlp] section.
func (c *Config) validateOTLP(bad func(key, format string, args ...any)) {
	o := c.OTLP
	if o.Endpoint != "" {
		if u, err := url.Parse(o.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("otlp.endpoint", "%q is not an http(s) URL", o.Endpoint)
		}
	}
	if o.Compression != "" && o.Compression != "gzip" && o.Compression != "none" {
		bad("otlp.compression", "%q is not one of gzip, none", o.Compression)
	}
	if o.Protocol != "" && o.Protocol != "grpc" && o.Protocol != "http/protobuf" {
		bad("otlp.protocol", "%q is not one of grpc, http/protobuf", o.Protocol)
	}
	if o.MaxCapture != "" && !slices.Contains([]string{"none", "metadata", "redacted", "full"}, o.MaxCapture) {
		bad("otlp.max_capture", "%q is not one of none, metadata, redacted, full", o.MaxCapture)
	}
	if o.Timeout < 0 {
		bad("otlp.timeout", "must not be negative, got %s", o.Timeout)
	}
	if o.SpoolBytes != 0 && o.SpoolBytes < 1<<16 {
		bad("otlp.spool_bytes", "must be at least 65536, got %d", o.SpoolBytes)
	}
	if o.Flush < 0 {
		bad("otlp.flush", "must not be negative, got %s", o.Flush)
	}
}
