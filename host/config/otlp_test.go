package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOTLPKeys: the [otlp] section from the file and the environment, its
// defaults, and its validation.
func TestOTLPKeys(t *testing.T) {
	_, env := testEnv(t)
	c, err := Load(LoadOptions{Env: env, Builtins: builtins})
	if err != nil {
		t.Fatal(err)
	}
	if c.OTLP.Enabled || c.OTLP.Endpoint != "" || c.OTLP.MaxCapture != "metadata" || c.OTLP.SpoolBytes != DefaultOTLPSpoolBytes || c.OTLP.Flush != 2*time.Second {
		t.Errorf("defaults %+v", c.OTLP)
	}
	path := filepath.Join(t.TempDir(), "c.toml")
	toml := "[otlp]\nendpoint = \"http://127.0.0.1:4318\"\nprotocol = \"grpc\"\ntimeout = \"3s\"\n[otlp.headers]\nauthorization = \"Bearer x\"\n"
	if err := os.WriteFile(path, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	_, env = testEnv(t, "ACPTAP_OTLP_MAX_CAPTURE=redacted", "ACPTAP_OTLP_FLUSH=0s")
	c, err = Load(LoadOptions{File: path, Env: env, Builtins: builtins})
	if err != nil {
		t.Fatal(err)
	}
	o := c.OTLP
	if o.Endpoint != "http://127.0.0.1:4318" || o.Protocol != "grpc" || o.Timeout != 3*time.Second ||
		o.Headers["authorization"] != "Bearer x" || o.MaxCapture != "redacted" || o.Flush != 0 {
		t.Errorf("otlp = %+v", o)
	}
	_, env = testEnv(t, "ACPTAP_OTLP_PROTOCOL=http/json", "ACPTAP_OTLP_MAX_CAPTURE=all", "ACPTAP_OTLP_ENDPOINT=localhost:4317")
	_, err = Load(LoadOptions{Env: env, Builtins: builtins})
	for _, want := range []string{`otlp.protocol: "http/json"`, `otlp.max_capture: "all"`, `otlp.endpoint: "localhost:4317"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Load() = %v, want %s", err, want)
		}
	}
}
