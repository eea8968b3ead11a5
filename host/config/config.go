package config

import (
	"maps"
	"reflect"
	"slices"
	"time"

	"github.com/acptap/acptap/host/captured"
)

// Defaults.
const (
	DefaultSchemaRevision = "2.0.0-alpha.9"
	DefaultLogLevel       = "info"
	DefaultQueueFrames    = 65536
	DefaultQueueBytes     = captured.DefaultQueueBytes
	// MinQueueBytes is the smallest tee.queue_bytes: one read of the tee.
	MinQueueBytes       = captured.BufferSize
	DefaultBatchFrames  = 256
	DefaultRestartMax   = 3
	DefaultStallTimeout = 30 * time.Second
	// DefaultCoalesce is how long capture gathers after the first line of a
	// batch before it writes the wire log and feeds the plugins.
	DefaultCoalesce = 2 * time.Millisecond
	// MaxCoalesce bounds tee.coalesce.
	MaxCoalesce = time.Second
	// DefaultPluginWindow is how long capture gathers the plugins' batches: ten
	// coalescing windows of a quiet session go to them in one batch, a wake of
	// each plugin instead of ten (at a line a millisecond, the round trip's CPU
	// per line fell by a third). A line reaches the ASR stream up to this much
	// later; the wire log and the bytes forwarded are not delayed.
	DefaultPluginWindow = 10 * time.Millisecond
	// MaxPluginWindow bounds tee.plugin_window.
	MaxPluginWindow   = time.Second
	DefaultRelayQueue = 10000
	DefaultRelayFlush = 2 * time.Second
	// OTLP export defaults.
	DefaultOTLPMaxCapture = "metadata"
	DefaultOTLPSpoolBytes = 64 << 20
	DefaultOTLPFlush      = 2 * time.Second
)

// Config is acptap's configuration. The koanf tags are the keys of the TOML
// file, of flags (dotted: "log.level") and, upper-cased, of the environment.
type Config struct {
	// Store is the store root (default: $XDG_DATA_HOME/acptap, else
	// ~/.local/share/acptap).
	Store string `koanf:"store"`
	Log   Log    `koanf:"log"`
	// PluginPath lists the directories searched for acptap-plugin-<name>.
	PluginPath []string `koanf:"plugin_path"`
	// Revisions maps an input revision ("acp/2@2.0.0-alpha.9", "acp/1") to
	// the plugins attached to it. Layers merge per revision; an empty list
	// attaches none.
	Revisions map[string][]string `koanf:"revisions"`
	// Plugins holds per-plugin settings, keyed by plugin name.
	Plugins map[string]PluginConfig `koanf:"plugins"`
	Tee     Tee                     `koanf:"tee"`
	Restart Restart                 `koanf:"restart"`
	// Record is how `acptap record` ends.
	Record Record `koanf:"record"`
	// SchemaRevision is the ACP v2 schema revision assumed for v2 wire.
	SchemaRevision string `koanf:"schema_revision"`
	// AEP configures the AEP outputs beyond the JSONL files.
	AEP AEP `koanf:"aep"`
	// OTLP configures the OpenTelemetry export (docs/otlp.md).
	OTLP OTLP `koanf:"otlp"`
	// Agents holds per-agent settings, keyed by a pattern matched against
	// the agent command (see AgentFor).
	Agents map[string]AgentConfig `koanf:"agents"`
	// Ship configures shipping outputs to a team store ([ship.nats]).
	Ship Ship `koanf:"ship"`

	// Builtins names the plugins compiled into the host binary; it comes
	// from LoadOptions.Builtins and is not a configuration key.
	Builtins []string `koanf:"-"`
	// File is the --config file it was loaded from ("" for the default
	// file, or none); a process acptap starts for it reads the same.
	File string `koanf:"-"`
}

// Log configures the host's own log.
type Log struct {
	// File is the log file (default <store>/logs/acptap.log).
	File string `koanf:"file"`
	// Level is one of trace, debug, info, warn, error.
	Level string `koanf:"level"`
	// Stderr logs to stderr instead of File.
	Stderr bool `koanf:"stderr"`
}

// PluginConfig is one plugin's section.
type PluginConfig struct {
	// SHA256 is the hex checksum the binary must have before it is started.
	SHA256 string `koanf:"sha256"`
	// Path is an explicit binary, bypassing the plugin path.
	Path string `koanf:"path"`
	// Disabled keeps the plugin from being started.
	Disabled bool `koanf:"disabled"`
	// Config is opaque to the host and passed to the plugin as JSON.
	Config map[string]any `koanf:"config"`
}

// AgentConfig is what acptap assumes about one agent.
type AgentConfig struct {
	// SchemaRevision is the ACP v2 schema revision this agent speaks when
	// its initialize exchange shows no evidence of a draft (e.g.
	// "2.0.0-alpha.13"); evidence on the wire wins. Empty: schema_revision.
	SchemaRevision string `koanf:"schema_revision"`
}

// Tee sizes the tee's capture queue.
type Tee struct {
	// QueueFrames is how many items (one per read the tee forwarded) may
	// wait for capture before the tee declares a gap instead of waiting.
	QueueFrames int `koanf:"queue_frames"`
	// QueueBytes bounds the bytes waiting for capture (both directions):
	// when they would exceed it, the tee declares a gap instead of waiting.
	QueueBytes int `koanf:"queue_bytes"`
	// BatchFrames is the most frames handed downstream at once.
	BatchFrames int `koanf:"batch_frames"`
	// Coalesce is how long capture keeps gathering lines after the first of
	// a batch before it flushes the wire log and feeds the plugins (0: off).
	Coalesce time.Duration `koanf:"coalesce"`
	// PluginWindow is how long capture gathers batches for the plugins after
	// the first before it feeds them (0: at every coalescing window).
	PluginWindow time.Duration `koanf:"plugin_window"`
}

// Record says how `acptap record` ends when the agent exits.
type Record struct {
	// MapBeforeExit makes record map what is left of the connection before
	// it exits, as with OTLP export on (the editor still sees EOF at the
	// agent's last byte; only the exit waits). Off (the default), record
	// exits with the agent and a detached finisher maps the rest.
	MapBeforeExit bool `koanf:"map_before_exit"`
}

// Restart bounds plugin restarts.
type Restart struct {
	// Max is how many times a crashed plugin is restarted.
	Max int `koanf:"max"`
	// StallTimeout is how long one plugin call may take before the plugin
	// counts as stalled and is restarted; 0 disables the watchdog. In TOML
	// and the environment it is a Go duration string ("30s").
	StallTimeout time.Duration `koanf:"stall_timeout"`
}

// AEP configures the HTTP binding of the AEP events (AEP-0003 §3.2):
// record posts every event it writes to a relay as well.
type AEP struct {
	// Relay is the relay's base URL (http or https, e.g.
	// "http://127.0.0.1:8787"); events go to {relay}/events. Empty: no
	// HTTP binding.
	Relay string `koanf:"relay"`
	// RelayQueue bounds the outbox of events waiting for the relay; when
	// it is full the oldest debug and info events are dropped first, and
	// every drop is counted in the log.
	RelayQueue int `koanf:"relay_queue"`
	// RelayFlush is how long record waits, once the agent has exited, for
	// the outbox to drain; what is left is counted as dropped. In TOML and
	// the environment it is a Go duration string ("2s").
	RelayFlush time.Duration `koanf:"relay_flush"`
	// RelayToken is the bearer token sent to the relay (Authorization:
	// Bearer; AEP-0003 §8.1); ACPTAP_AEP_RELAY_TOKEN sets it without a
	// file. Never logged.
	RelayToken string `koanf:"relay_token"`
	// RelayTokenFile is a file holding the token (its first line), read
	// when record starts; RelayToken wins when both are set.
	RelayTokenFile string `koanf:"relay_token_file"`
}

// OTLP configures the OpenTelemetry export: AEP events as OTLP log
// records and turns and tool calls as GenAI spans, through a spool in the
// store. Empty fields defer to the OTEL_EXPORTER_OTLP_* environment.
type OTLP struct {
	// Enabled turns export on with the endpoint the OTEL_EXPORTER_OTLP_*
	// environment (or the OTLP default) gives; setting Endpoint turns it
	// on too.
	Enabled bool `koanf:"enabled"`
	// Endpoint is the collector's base URL (http/protobuf adds /v1/logs and
	// /v1/traces; grpc uses its host and port; https means TLS).
	Endpoint string `koanf:"endpoint"`
	// Protocol is "grpc" or "http/protobuf" (empty: the environment, else
	// http/protobuf).
	Protocol string `koanf:"protocol"`
	// Headers are sent with every request (added to the environment's).
	Headers map[string]string `koanf:"headers"`
	// Timeout bounds one export request (0: the environment, else 10s).
	Timeout time.Duration `koanf:"timeout"`
	// Insecure sends gRPC in plaintext even to an https endpoint.
	Insecure bool `koanf:"insecure"`
	// Compression is "gzip" or "none" (empty: the environment, else none).
	Compression string `koanf:"compression"`
	// MaxCapture down-levels events before export: none, metadata,
	// redacted or full. Message content reaches spans only from redacted up.
	MaxCapture string `koanf:"max_capture"`
	// SpoolBytes bounds the spool (<store>/otlp/spool); when it is full the
	// oldest debug and info records are dropped first, and counted.
	SpoolBytes int64 `koanf:"spool_bytes"`
	// Flush is how long record waits at exit for the spool to drain; what
	// is left stays spooled for the next run.
	Flush time.Duration `koanf:"flush"`
}

// DefaultRevisions is the built-in revision → plugins table. "acp-v1-log"
// is not negotiated on a wire: acptap convert forces it for stored ACP v1
// logs.
func DefaultRevisions() map[string][]string {
	return map[string][]string{
		"acp/2@" + DefaultSchemaRevision: {"acpv2", "aep"},
		"acp/1":                          {"acpv1", "aep"},
		"acp-v1-log":                     {"acpv1", "aep"},
	}
}

// defaults is the lowest layer: a Config of the defaults as a nested map
// (revision keys contain dots, so it must not be unflattened). When
// builtins is not empty, the default table names only plugins this binary
// has built in; a user's own table (file, environment, flags) is kept as
// written and validated.
func defaults(store string, builtins []string) map[string]any {
	revs := map[string][]string{}
	for k, v := range DefaultRevisions() {
		var names []string
		for _, n := range v {
			if len(builtins) == 0 || slices.Contains(builtins, n) {
				names = append(names, n)
			}
		}
		revs[k] = names
	}
	c := Config{
		Store:          store,
		Log:            Log{Level: DefaultLogLevel},
		PluginPath:     []string{},
		Revisions:      revs,
		Plugins:        map[string]PluginConfig{},
		Tee:            Tee{QueueFrames: DefaultQueueFrames, QueueBytes: DefaultQueueBytes, BatchFrames: DefaultBatchFrames, Coalesce: DefaultCoalesce, PluginWindow: DefaultPluginWindow},
		Restart:        Restart{Max: DefaultRestartMax, StallTimeout: DefaultStallTimeout},
		SchemaRevision: DefaultSchemaRevision,
		AEP:            AEP{RelayQueue: DefaultRelayQueue, RelayFlush: DefaultRelayFlush},
		Ship:           shipDefaults(),
		OTLP:           OTLP{Headers: map[string]string{}, MaxCapture: DefaultOTLPMaxCapture, SpoolBytes: DefaultOTLPSpoolBytes, Flush: DefaultOTLPFlush},
	}
	return layer(reflect.ValueOf(c)).(map[string]any)
}

// keys is the shape of the configuration (schema, read from Config's
// tags): a nil value is a leaf that takes any value; "*" matches any key
// (plugin names, revisions).
type keys map[string]keys

// leafPaths lists the fixed leaf keys ([log level], [store], …), which the
// environment may spell with single underscores.
func leafPaths(k keys, prefix []string) [][]string {
	var out [][]string
	for _, name := range slices.Sorted(maps.Keys(k)) {
		if name == "*" {
			continue
		}
		p := append(slices.Clone(prefix), name)
		if k[name] == nil {
			out = append(out, p)
		} else {
			out = append(out, leafPaths(k[name], p)...)
		}
	}
	return out
}
