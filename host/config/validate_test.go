package config

import (
	"strings"
	"testing"
	"time"
)

func validConfig() *Config {
	return &Config{
		Store:          "/s",
		Log:            Log{File: "/s/logs/acptap.log", Level: "info"},
		Revisions:      DefaultRevisions(),
		Plugins:        map[string]PluginConfig{"acpv2": {SHA256: sum}},
		Tee:            Tee{QueueFrames: 65536, QueueBytes: DefaultQueueBytes, BatchFrames: 256, Coalesce: DefaultCoalesce},
		Restart:        Restart{Max: 3, StallTimeout: DefaultStallTimeout},
		SchemaRevision: DefaultSchemaRevision,
		AEP:            AEP{RelayQueue: DefaultRelayQueue, RelayFlush: DefaultRelayFlush},
		Builtins:       builtins,
	}
}

func TestValidateMessages(t *testing.T) {
	if err := validConfig().Validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	cases := []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"store", func(c *Config) { c.Store = "" }, "store: not set, and neither XDG_DATA_HOME nor HOME is set"},
		{"level", func(c *Config) { c.Log.Level = "loud" }, `log.level: "loud" is not one of trace, debug, info, warn, error`},
		{"log file", func(c *Config) { c.Log.File = "" }, "log.file: not set, and log.stderr is false"},
		{"plugin path", func(c *Config) { c.PluginPath = []string{"/a", ""} }, "plugin_path[1]: empty directory"},
		{"queue", func(c *Config) { c.Tee.QueueFrames = 0 }, "tee.queue_frames: must be at least 1, got 0"},
		{"queue bytes", func(c *Config) { c.Tee.QueueBytes = 1000 }, "tee.queue_bytes: must be at least 65536 (one read), got 1000"},
		{"coalesce", func(c *Config) { c.Tee.Coalesce = -time.Millisecond }, "tee.coalesce: must be between 0s and 1s, got -1ms"},
		{"coalesce long", func(c *Config) { c.Tee.Coalesce = 2 * time.Second }, "tee.coalesce: must be between 0s and 1s, got 2s"},
		{"plugin window", func(c *Config) { c.Tee.PluginWindow = -time.Millisecond }, "tee.plugin_window: must be between 0s and 1s, got -1ms"},
		{"plugin window long", func(c *Config) { c.Tee.PluginWindow = 2 * time.Second }, "tee.plugin_window: must be between 0s and 1s, got 2s"},
		{"batch", func(c *Config) { c.Tee.BatchFrames = 70000 }, "tee.batch_frames: must be between 1 and tee.queue_frames (65536), got 70000"},
		{"restart", func(c *Config) { c.Restart.Max = -1 }, "restart.max: must not be negative, got -1"},
		{"stall", func(c *Config) { c.Restart.StallTimeout = -time.Second }, "restart.stall_timeout: must not be negative, got -1s"},
		{"schema", func(c *Config) { c.SchemaRevision = "" }, "schema_revision: not set"},
		{"relay scheme", func(c *Config) { c.AEP.Relay = "ftp://x" }, `aep.relay: "ftp://x": the scheme must be http or https`},
		{"relay host", func(c *Config) { c.AEP.Relay = "http://" }, `aep.relay: "http://" has no host`},
		{"relay query", func(c *Config) { c.AEP.Relay = "http://h/?a=1" }, `aep.relay: "http://h/?a=1": a base URL has no user, query or fragment`},
		{"relay queue", func(c *Config) { c.AEP.RelayQueue = 0 }, "aep.relay_queue: must be at least 1, got 0"},
		{"relay flush", func(c *Config) { c.AEP.RelayFlush = -time.Second }, "aep.relay_flush: must not be negative, got -1s"},
		{"sha256", func(c *Config) { c.Plugins["acpv2"] = PluginConfig{SHA256: "abc"} }, "plugins.acpv2.sha256: not 64 hex digits"},
		{"plugin name", func(c *Config) { c.Plugins["Bad Name"] = PluginConfig{} }, `plugins."Bad Name": plugin names must match ^[a-z0-9][a-z0-9_-]*$`},
		{"empty revision", func(c *Config) { c.Revisions[""] = nil }, `revisions."": empty input revision`},
		{"unknown plugin", func(c *Config) { c.Revisions["acp/2@2.0.0-alpha.9"] = []string{"acpv2", "nope"} },
			`revisions."acp/2@2.0.0-alpha.9": plugin "nope" is not configured: it is not built in, plugins.nope.path is not set, and plugin_path is empty`},
		{"bad plugin ref", func(c *Config) { c.Revisions["acp/1"] = []string{"../x"} },
			`revisions."acp/1": plugin "../x" is not a valid plugin name`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := validConfig()
			c.mutate(cfg)
			err := cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Validate() = %v\nwant it to contain %s", err, c.want)
			}
		})
	}
}

func TestValidatePluginResolution(t *testing.T) {
	for name, mutate := range map[string]func(*Config){
		"built in":        func(c *Config) { c.Revisions["r"] = []string{"aep"} },
		"explicit path":   func(c *Config) { c.Revisions["r"] = []string{"v"}; c.Plugins["v"] = PluginConfig{Path: "/bin/v"} },
		"plugin path":     func(c *Config) { c.Revisions["r"] = []string{"v"}; c.PluginPath = []string{"/plugins"} },
		"no plugins":      func(c *Config) { c.Revisions["r"] = nil },
		"disabled plugin": func(c *Config) { c.Plugins["acpv1"] = PluginConfig{Disabled: true} },
	} {
		c := validConfig()
		mutate(c)
		if err := c.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	c := validConfig()
	c.Log.Level = "loud"
	c.Restart.Max = -2
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "log.level") || !strings.Contains(err.Error(), "restart.max") {
		t.Errorf("Validate() = %v, want both problems", err)
	}
}

func TestLoadValidates(t *testing.T) {
	_, env := testEnv(t, "ACPTAP_LOG_LEVEL=loud")
	_, err := Load(LoadOptions{Env: env, Builtins: builtins})
	if err == nil || !strings.Contains(err.Error(), `log.level: "loud"`) {
		t.Errorf("err = %v", err)
	}
	_, env = testEnv(t)
	if _, err := Load(LoadOptions{Env: env}); err == nil || !strings.Contains(err.Error(), `plugin "acpv2" is not configured`) {
		t.Errorf("no builtins: err = %v", err)
	}
}
