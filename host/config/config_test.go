package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/host/captured"

	"github.com/google/go-cmp/cmp"
)

var builtins = []string{"acpv2", "acpv1", "aep"}

const sum = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// testEnv is an environment whose HOME and XDG dirs are inside a temp dir,
// so no test reads the real user's files.
func testEnv(t *testing.T, extra ...string) (home string, env []string) {
	t.Helper()
	home = t.TempDir()
	return home, append([]string{"HOME=" + home}, extra...)
}

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o700)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadDefaults(t *testing.T) {
	home, env := testEnv(t)
	c, err := Load(LoadOptions{Env: env, Builtins: builtins})
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(home, ".local", "share", "acptap")
	want := &Config{
		Store:      root,
		Log:        Log{File: filepath.Join(root, "logs", "acptap.log"), Level: "info"},
		PluginPath: []string{},
		Revisions: map[string][]string{"acp/2@2.0.0-alpha.9": {"acpv2", "aep"}, "acp/1": {"acpv1", "aep"},
			"acp-v1-log": {"acpv1", "aep"}},
		Plugins:        map[string]PluginConfig{},
		Tee:            Tee{QueueFrames: 65536, QueueBytes: captured.DefaultQueueBytes, BatchFrames: 256, Coalesce: 2 * time.Millisecond, PluginWindow: 10 * time.Millisecond},
		Restart:        Restart{Max: 3, StallTimeout: 30 * time.Second},
		SchemaRevision: "2.0.0-alpha.9",
		AEP:            AEP{RelayQueue: 10000, RelayFlush: 2 * time.Second},
		OTLP:           OTLP{Headers: map[string]string{}, MaxCapture: "metadata", SpoolBytes: 64 << 20, Flush: 2 * time.Second},
		Ship: Ship{NATS: ShipNATS{Stream: "ACPTAP", Subject: "acptap", CreateStream: true, Replicas: 1,
			Interval: time.Second, Linger: 10 * time.Minute, Timeout: 5 * time.Second, Durable: "acptap-collect", AckWait: 30 * time.Second}},
		Builtins: builtins,
	}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	_, env = testEnv(t, "XDG_DATA_HOME=/xdg/data")
	if c, _ := Load(LoadOptions{Env: env, Builtins: builtins}); c.Store != "/xdg/data/acptap" {
		t.Errorf("store with XDG_DATA_HOME = %q", c.Store)
	}
}

// TestDefaultRevisionsKeepOnlyBuiltins: the default table names only
// plugins this binary has; acp-v1-log (forced by acptap convert) is
// filtered like the negotiated revisions.
func TestDefaultRevisionsKeepOnlyBuiltins(t *testing.T) {
	_, env := testEnv(t)
	c, err := Load(LoadOptions{Env: env, Builtins: []string{"acpv2", "aep"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"acp/2@2.0.0-alpha.9": {"acpv2", "aep"}, "acp/1": {"aep"}, "acp-v1-log": {"aep"}}
	if diff := cmp.Diff(want, c.Revisions); diff != "" {
		t.Errorf("revisions (-want +got):\n%s", diff)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestLayerPrecedence(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, filepath.Join(dir, "c.toml"), `
store = "/file/store"
[log]
level = "debug"
file = "/file/log"
[tee]
queue_frames = 100
queue_bytes = 1048576
batch_frames = 10
coalesce = "5ms"
plugin_window = "20ms"
[restart]
max = 5
stall_timeout = "1m30s"
`)
	layers := []struct {
		name  string
		env   []string
		flags map[string]any
		want  func(*Config) string
	}{
		{"file over defaults", nil, nil, func(c *Config) string {
			return c.Store + " " + c.Log.Level + " " + c.Log.File
		}},
		{"env over file", []string{"ACPTAP_STORE=/env/store", "ACPTAP_LOG_LEVEL=warn"}, nil, func(c *Config) string {
			return c.Store + " " + c.Log.Level + " " + c.Log.File
		}},
		{"flags over env", []string{"ACPTAP_STORE=/env/store", "ACPTAP_LOG_LEVEL=warn"},
			map[string]any{"store": "/flag/store", "log.level": "error"}, func(c *Config) string {
				return c.Store + " " + c.Log.Level + " " + c.Log.File
			}},
	}
	want := []string{
		"/file/store debug /file/log",
		"/env/store warn /file/log",
		"/flag/store error /file/log",
	}
	for i, l := range layers {
		_, env := testEnv(t, l.env...)
		c, err := Load(LoadOptions{File: file, Env: env, Flags: l.flags, Builtins: builtins})
		if err != nil {
			t.Fatalf("%s: %v", l.name, err)
		}
		if got := l.want(c); got != want[i] {
			t.Errorf("%s: got %q, want %q", l.name, got, want[i])
		}
		if c.Tee != (Tee{QueueFrames: 100, QueueBytes: 1 << 20, BatchFrames: 10, Coalesce: 5 * time.Millisecond, PluginWindow: 20 * time.Millisecond}) || c.Restart != (Restart{5, 90 * time.Second}) {
			t.Errorf("%s: tee %+v restart %+v lost from the file", l.name, c.Tee, c.Restart)
		}
	}
}

func TestDefaultFileFromXDGConfigHome(t *testing.T) {
	xdg := t.TempDir()
	_, env := testEnv(t, "XDG_CONFIG_HOME="+xdg)
	if _, err := Load(LoadOptions{Env: env, Builtins: builtins}); err != nil {
		t.Fatalf("missing default file: %v", err)
	}
	writeFile(t, filepath.Join(xdg, "acptap", "config.toml"), "schema_revision = \"2.0.0-alpha.10\"\n")
	c, err := Load(LoadOptions{Env: env, Builtins: builtins})
	if err != nil || c.SchemaRevision != "2.0.0-alpha.10" {
		t.Errorf("default file not read: %v, %+v", err, c)
	}
}

func TestExplicitFileMustExist(t *testing.T) {
	_, env := testEnv(t)
	_, err := Load(LoadOptions{File: filepath.Join(t.TempDir(), "nope.toml"), Env: env})
	if err == nil || !strings.Contains(err.Error(), "nope.toml") {
		t.Errorf("err = %v, want one naming the missing file", err)
	}
}

func TestFileUnknownKeys(t *testing.T) {
	file := writeFile(t, filepath.Join(t.TempDir(), "c.toml"), `
stor = "/x"
[log]
levle = "debug"
[plugins.acpv2]
sha265 = "abc"
[plugins.acpv2.config]
anything = { goes = true }
[revisions]
"acp/2@2.0.0-alpha.10" = ["acpv2"]
`)
	_, env := testEnv(t)
	_, err := Load(LoadOptions{File: file, Env: env, Builtins: builtins})
	if err == nil {
		t.Fatal("no error")
	}
	want := "unknown key(s) log.levle, plugins.acpv2.sha265, stor"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want it to contain %q", err, want)
	}
}

func TestFileSyntaxAndTypeErrors(t *testing.T) {
	_, env := testEnv(t)
	for content, want := range map[string]string{
		"store = ":                              "c.toml:1:",
		"[tee]\nqueue_frames = \"many\"":        `config: tee.queue_frames: "many" is not an integer`,
		"[tee]\nqueue_frames = 1.5":             "config: tee.queue_frames: 1.5 is not an integer",
		"[tee]\nqueue_bytes = \"16MiB\"":        `config: tee.queue_bytes: "16MiB" is not an integer`,
		"[plugins.x]\ndisabled = \"yes\"":       `config: plugins.x.disabled: "yes" is not a boolean`,
		"plugin_path = \"/a\"":                  "config: plugin_path: source data must be an array",
		"[plugins.\"a b\"]\ndisabled = \"no!\"": `config: plugins."a b".disabled: "no!" is not a boolean`,
	} {
		file := writeFile(t, filepath.Join(t.TempDir(), "c.toml"), content)
		_, err := Load(LoadOptions{File: file, Env: env, Builtins: builtins})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want one mentioning %q", content, err, want)
		}
	}
}

func TestEnvironment(t *testing.T) {
	_, env := testEnv(t,
		"ACPTAP_STORE=/env/store",
		"ACPTAP_LOG_FILE=/env/log",
		"ACPTAP_LOG_LEVEL=DEBUG",
		"ACPTAP_LOG_STDERR=true",
		"ACPTAP_PLUGIN_PATH=/a:/b",
		"ACPTAP_TEE_QUEUE_FRAMES=10",
		"ACPTAP_TEE_QUEUE_BYTES=131072",
		"ACPTAP_TEE_COALESCE=0s",
		"ACPTAP_TEE_PLUGIN_WINDOW=0s",
		"ACPTAP_TEE__BATCH_FRAMES=5",
		"ACPTAP_RESTART_MAX=0",
		"ACPTAP_RESTART_STALL_TIMEOUT=0s",
		"ACPTAP_PLUGINS__ACPV2__SHA256="+strings.ToUpper(sum),
		"ACPTAP_PLUGINS__VENDOR__PATH=/opt/acptap-plugin-vendor",
		"ACPTAP_PLUGINS__VENDOR__DISABLED=1",
		"ACPTAP_PLUGINS__VENDOR__CONFIG__LIMIT=7",
		"ACPTAP_REVISIONS__acp/1=acpv1, vendor",
		"ACPTAP_REVISIONS__acp/2@2.0.0-alpha.10=vendor",
		"ACPTAP_PLUGIN=magic-cookie", // not a key: ignored
		"OTHER_STORE=/nope",
	)
	c, err := Load(LoadOptions{Env: env, Builtins: builtins})
	if err != nil {
		t.Fatal(err)
	}
	if c.Store != "/env/store" || c.Log != (Log{File: "/env/log", Level: "debug", Stderr: true}) {
		t.Errorf("store %q, log %+v", c.Store, c.Log)
	}
	if diff := cmp.Diff([]string{"/a", "/b"}, c.PluginPath); diff != "" {
		t.Errorf("plugin_path (-want +got):\n%s", diff)
	}
	if c.Tee != (Tee{QueueFrames: 10, QueueBytes: 131072, BatchFrames: 5, Coalesce: 0, PluginWindow: 0}) || c.Restart != (Restart{}) {
		t.Errorf("tee %+v, restart %+v", c.Tee, c.Restart)
	}
	wantPlugins := map[string]PluginConfig{
		"acpv2":  {SHA256: sum},
		"vendor": {Path: "/opt/acptap-plugin-vendor", Disabled: true, Config: map[string]any{"limit": "7"}},
	}
	if diff := cmp.Diff(wantPlugins, c.Plugins); diff != "" {
		t.Errorf("plugins (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"acpv1", "vendor"}, c.Revisions["acp/1"]); diff != "" {
		t.Errorf("revisions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"vendor"}, c.Revisions["acp/2@2.0.0-alpha.10"]); diff != "" {
		t.Errorf("dotted revision (-want +got):\n%s", diff)
	}

	_, env = testEnv(t, "ACPTAP_LOG_STDERR=maybe")
	if _, err := Load(LoadOptions{Env: env}); err == nil || !strings.Contains(err.Error(), `log.stderr: "maybe" is not a boolean`) {
		t.Errorf("bad env boolean: err = %v", err)
	}
	_, env = testEnv(t, "ACPTAP_PLUGINS__ACPV2__SHA265="+sum)
	if _, err := Load(LoadOptions{Env: env}); err == nil || !strings.Contains(err.Error(), "plugins.acpv2.sha265") {
		t.Errorf("unknown nested env key: err = %v", err)
	}
}

// TestAEPRelayKeys: the HTTP binding's keys from the file and the
// environment (single-underscore leaves), and their validation.
func TestAEPRelayKeys(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.toml")
	if err := os.WriteFile(path, []byte("[aep]\nrelay = \"http://127.0.0.1:8787\"\nrelay_flush = \"500ms\"\nrelay_token_file = \"/t\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, env := testEnv(t, "ACPTAP_AEP_RELAY_QUEUE=50", "ACPTAP_AEP_RELAY_TOKEN=tok")
	c, err := Load(LoadOptions{File: path, Env: env, Builtins: builtins})
	if err != nil {
		t.Fatal(err)
	}
	if c.AEP != (AEP{Relay: "http://127.0.0.1:8787", RelayQueue: 50, RelayFlush: 500 * time.Millisecond, RelayToken: "tok", RelayTokenFile: "/t"}) {
		t.Errorf("aep = %+v", c.AEP)
	}
	_, env = testEnv(t, "ACPTAP_AEP_RELAY=ws://x")
	if _, err := Load(LoadOptions{Env: env, Builtins: builtins}); err == nil || !strings.Contains(err.Error(), `aep.relay: "ws://x": the scheme must be http or https`) {
		t.Errorf("Load() = %v", err)
	}
}

func TestFlags(t *testing.T) {
	_, env := testEnv(t)
	c, err := Load(LoadOptions{Env: env, Builtins: builtins, Flags: map[string]any{
		"store": "/flag/store", "log.stderr": true, "plugin_path": []string{"/p"},
		"plugins.x.path": "/bin/x", "revisions": map[string]any{"acp/2@2.0.0-alpha.10": []string{"x"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Store != "/flag/store" || !c.Log.Stderr || c.Plugins["x"].Path != "/bin/x" ||
		len(c.PluginPath) != 1 || c.Revisions["acp/2@2.0.0-alpha.10"][0] != "x" || len(c.Revisions) != len(DefaultRevisions())+1 {
		t.Errorf("flags not applied: %+v", c)
	}
	if _, err := Load(LoadOptions{Env: env, Flags: map[string]any{"log.levl": "x"}}); err == nil ||
		!strings.Contains(err.Error(), "flags: unknown key(s) log.levl") {
		t.Errorf("unknown flag: err = %v", err)
	}
}

func TestPathsAreExpandedAndAbsolute(t *testing.T) {
	home, env := testEnv(t)
	c, err := Load(LoadOptions{Env: env, Builtins: builtins, Flags: map[string]any{
		"store": "~/st", "plugin_path": []string{"rel/dir"}, "plugins.x.path": "~/bin/x",
	}})
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if c.Store != filepath.Join(home, "st") || c.Log.File != filepath.Join(home, "st", "logs", "acptap.log") ||
		c.PluginPath[0] != filepath.Join(wd, "rel", "dir") || c.Plugins["x"].Path != filepath.Join(home, "bin", "x") {
		t.Errorf("paths: %q %q %q %q", c.Store, c.Log.File, c.PluginPath, c.Plugins["x"].Path)
	}
}

// TestKeysFromTags: the known keys are the struct's koanf tags — a struct
// its fields, a map of structs any key with the struct's fields, a map of
// plain values any key, an opaque map and everything else a leaf — so no
// hand-kept list beside the tags can fall behind.
func TestKeysFromTags(t *testing.T) {
	type inner struct {
		A int    `koanf:"a"`
		B string `koanf:"b"`
	}
	type sample struct {
		Leaf     string            `koanf:"leaf"`
		List     []string          `koanf:"list"`
		Wait     time.Duration     `koanf:"wait"`
		Sub      inner             `koanf:"sub"`
		ByName   map[string]inner  `koanf:"by_name"`
		Labels   map[string]string `koanf:"labels"`
		Opaque   map[string]any    `koanf:"opaque"`
		Skipped  string            `koanf:"-"`
		Untagged string
		private  string `koanf:"private"`
	}
	want := keys{
		"leaf": nil, "list": nil, "wait": nil,
		"sub":     {"a": nil, "b": nil},
		"by_name": {"*": {"a": nil, "b": nil}},
		"labels":  {"*": nil},
		"opaque":  nil,
	}
	if diff := cmp.Diff(want, keysOf(reflect.TypeFor[sample]())); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	// And Config's own: every tagged field is known, the rest is not.
	for _, p := range [][]string{{"log", "level"}, {"ship", "nats", "ack_wait"}, {"otlp", "headers", "x"}, {"plugins", "p", "config"}, {"agents", "a", "schema_revision"}} {
		if bad := unknownKeys(nest(p), schema, nil); len(bad) != 0 {
			t.Errorf("%v unknown: %v", p, bad)
		}
	}
	for _, p := range [][]string{{"builtins"}, {"file"}, {"log", "nope"}, {"plugins", "p", "nope"}} {
		if bad := unknownKeys(nest(p), schema, nil); len(bad) != 1 {
			t.Errorf("%v known", p)
		}
	}
}

func nest(p []string) map[string]any {
	var v any = "x"
	for i := len(p) - 1; i >= 0; i-- {
		v = map[string]any{p[i]: v}
	}
	return v.(map[string]any)
}

// TestEveryKeyDocumented: every fixed key the struct tags give is in
// docs/config.md, spelled in full (`log.level`) or, in a row that names
// its section (`ship.nats.tls_ca`, `tls_cert`), by its last part.
func TestEveryKeyDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "config.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(doc), "\n")
	paths := leafPaths(schema, nil)
	if len(paths) < 40 {
		t.Fatalf("only %d keys read from the tags", len(paths))
	}
	for _, p := range paths {
		full := "`" + strings.Join(p, ".") + "`"
		found := strings.Contains(string(doc), full)
		for _, l := range lines {
			if found || len(p) < 2 {
				break
			}
			found = strings.Contains(l, "`"+strings.Join(p[:len(p)-1], ".")+".") && strings.Contains(l, "`"+p[len(p)-1]+"`")
		}
		if !found {
			t.Errorf("%s is not in docs/config.md", full)
		}
	}
}
