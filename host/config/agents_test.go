package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentsSchemaRevision: agents.<pattern>.schema_revision loads from
// the file and the environment, and AgentFor matches the program's base
// name, a pattern over it, or a pattern over the whole command line.
func TestAgentsSchemaRevision(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config.toml")
	toml := "[agents.my-agent]\nschema_revision = \"2.0.0-alpha.13\"\n\n[agents.\"node */sdk24/*.mjs\"]\nschema_revision = \"2.0.0-alpha.13\"\n"
	if err := os.WriteFile(file, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + dir, "ACPTAP_AGENTS__GEM*__SCHEMA_REVISION=2.0.0-alpha.9"}
	c, err := Load(LoadOptions{File: file, Env: env, Builtins: []string{"acpv2", "acpv1", "aep"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cmd       []string
		key, want string
	}{
		{[]string{"/usr/local/bin/my-agent", "--acp"}, "my-agent", "2.0.0-alpha.13"},
		{[]string{"gemini", "--experimental-acp"}, "gem*", "2.0.0-alpha.9"},
		{[]string{"node", "/w/testdata/sdk24/agent.mjs"}, "node */sdk24/*.mjs", "2.0.0-alpha.13"},
	} {
		a, key, ok := c.AgentFor(tc.cmd)
		if !ok || key != tc.key || a.SchemaRevision != tc.want {
			t.Errorf("AgentFor(%v) = %+v, %q, %v; want %q %q", tc.cmd, a, key, ok, tc.key, tc.want)
		}
	}
	if _, _, ok := c.AgentFor([]string{"other"}); ok {
		t.Error("an unconfigured agent matched")
	}
	bad := filepath.Join(dir, "bad.toml")
	_ = os.WriteFile(bad, []byte("[agents.x]\nschema_revision = \"\"\n"), 0o600)
	if _, err := Load(LoadOptions{File: bad, Env: []string{"HOME=" + dir}, Builtins: []string{"acpv2", "acpv1", "aep"}}); err == nil || !strings.Contains(err.Error(), "agents.x.schema_revision") {
		t.Errorf("empty schema_revision: %v", err)
	}
}
