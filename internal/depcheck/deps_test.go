package depcheck

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/acptap/acptap/"

type pkg struct {
	ImportPath string
	Imports    []string
}

// shared are the module-root internal packages that sdk and the plugins
// may import: libraries of their own, not the host's test harnesses. Other
// modules cannot import them (Go's internal rule), so they are no API.
var shared = map[string]bool{
	"internal/acpschema": true, // the official ACP schemas and the frame checker
	"internal/jsonscan":  true, // the one-pass JSON member scanner
	"internal/jsonl":     true, // the LF line reader with the torn-tail rule
	"internal/replay":    true, // the loss report and the round-trip check
	"internal/release":   true, // acptap's version, the built-in plugins' too
}

// wire is the host ⇄ plugin wire: sdk (sdk/plugin.Serve, sdk/mappertest)
// and the host import it; a plugin serves through sdk/plugin, never the
// wire itself. It is a library like the shared ones.
const wire = "internal/pluginwire"

// upper says whether p is in host, plugins or examples.
func upper(p string) bool {
	return strings.HasPrefix(p, "host") || strings.HasPrefix(p, "plugins") || strings.HasPrefix(p, "examples")
}

// rule says which module-internal imports a package may have.
func violates(from, to string) string {
	f := strings.TrimPrefix(from, module)
	t := strings.TrimPrefix(to, module)
	switch {
	case strings.HasPrefix(f, "sdk") && upper(t):
		return "sdk never imports host, plugins or examples"
	case strings.HasPrefix(t, "plugins/internal/") && !strings.HasPrefix(f, "plugins/"):
		return "nothing outside plugins/ imports plugins/internal (host/builtin reaches a plugin's own package)"
	case strings.HasPrefix(f, "plugins/") && (t == wire || strings.HasPrefix(t, wire+"/")):
		return "a plugin serves through sdk/plugin, never the plugin wire"
	case (strings.HasPrefix(f, "sdk") || strings.HasPrefix(f, "plugins/")) && strings.HasPrefix(t, "internal/") && !shared[t] && t != wire && !strings.HasPrefix(t, wire+"/"):
		return "sdk and plugins import from the module-root internal only the shared libraries (sdk the plugin wire too)"
	case strings.HasPrefix(f, "plugins/") && !strings.HasPrefix(t, "sdk") && !strings.HasPrefix(t, "internal/") &&
		!strings.HasPrefix(t, "plugins/internal/") && !strings.HasPrefix(t, strings.Join(strings.SplitN(f, "/", 3)[:2], "/")):
		return "a plugin imports only sdk, its own packages, plugins/internal and the shared internal libraries"
	case (shared[f] || f == wire || strings.HasPrefix(f, wire+"/")) && upper(t):
		return "a library sdk and plugins share never imports host, plugins or examples"
	case strings.HasPrefix(f, "host/") && strings.HasPrefix(t, "plugins/") && f != "host/builtin":
		return "host reaches plugins only through host/builtin"
	case f == "host/pipeline" && t == "host/store":
		return "the pipeline writes through its own Sink and SessionStore interfaces (host/storesink implements them over the store)"
	case f == "host/pipeline" && t == "host/tee":
		return "the pipeline takes the capture queue's items (host/captured), not the tee"
	case f == "host/cli" && (t == "host/pipeline" || t == "host/storesink"):
		return "the CLI parses flags and runs recordings through host/recording, never the pipeline itself"
	case (strings.HasPrefix(f, "host/") || strings.HasPrefix(f, "cmd/")) && strings.HasPrefix(t, "examples/"):
		return "the binary never imports examples (what it runs of them lives in internal/demo)"
	}
	return ""
}

func TestDependencyDirection(t *testing.T) {
	out, err := exec.Command("go", "list", "-json", "github.com/acptap/acptap/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	n := 0
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		n++
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			if why := violates(p.ImportPath, imp); why != "" {
				t.Errorf("%s imports %s: %s", p.ImportPath, imp, why)
			}
		}
	}
	if n < 10 {
		t.Fatalf("go list saw only %d packages; the check would prove nothing", n)
	}
}

// TestRuleCatchesViolations proves the rule is not vacuous.
func TestRuleCatchesViolations(t *testing.T) {
	bad := [][2]string{
		{module + "sdk", module + "host/store"},
		{module + "sdk/asr", module + "plugins/acpv2"},
		{module + "plugins/acpv2", module + "host/wire"},
		{module + "plugins/aep", module + "plugins/acpv2"},
		{module + "host/pipeline", module + "plugins/acpv2"},
		{module + "host/cli", module + "examples/agent"},
		{module + "cmd/acptap", module + "examples/client"},
		{module + "host/sessions", module + "plugins/internal/acpasr"},
		{module + "host/builtin", module + "plugins/internal/acpasr"},
		{module + "internal/testpeers", module + "plugins/internal/acpasr"},
		{module + "sdk/asr", module + "plugins/internal/acpasr"},
		{module + "cmd/acptap", module + "plugins/internal/acpreplay"},
		{module + "plugins/acpv2", module + "internal/testpeers"},
		{module + "sdk", module + "internal/e2e"},
		{module + "plugins/internal/acpasr", module + "host/store"},
		{module + "plugins/internal/acpasr", module + "plugins/acpv2"},
		{module + "internal/jsonscan", module + "host/wire"},
		{module + "internal/acpschema", module + "plugins/acpv2"},
		{module + "internal/replay", module + "examples/agent"},
		{module + "plugins/acpv2", module + "internal/pluginwire"},
		{module + "plugins/internal/acpasr", module + "internal/pluginwire/mapperpb"},
		{module + "internal/pluginwire", module + "host/pluginhost"},
		{module + "internal/pluginwire/mapperpb", module + "plugins/aep"},
		{module + "internal/release", module + "host/cli"},
		{module + "host/pipeline", module + "host/store"},
		{module + "host/pipeline", module + "host/tee"},
		{module + "host/cli", module + "host/pipeline"},
		{module + "host/cli", module + "host/storesink"},
	}
	for _, b := range bad {
		if violates(b[0], b[1]) == "" {
			t.Errorf("%s → %s should violate the dependency direction", b[0], b[1])
		}
	}
	good := [][2]string{
		{module + "host/builtin", module + "plugins/acpv2"},
		{module + "plugins/acpv2", module + "sdk/asr"},
		{module + "host/cli", module + "sdk"},
		{module + "host/cli", module + "internal/demo/agentlib"},
		{module + "plugins/acpv2", module + "plugins/internal/acpasr"},
		{module + "plugins/internal/acpreplay", module + "plugins/internal/acpasr"},
		{module + "plugins/acpv1", module + "internal/replay"},
		{module + "plugins/internal/acpasr", module + "internal/acpschema"},
		{module + "sdk/asr", module + "internal/jsonscan"},
		{module + "host/ui", module + "internal/acpschema"},
		{module + "internal/replay", module + "sdk/asr"},
		{module + "sdk/plugin", module + "internal/pluginwire"},
		{module + "sdk/mappertest", module + "internal/pluginwire"},
		{module + "host/pluginhost", module + "internal/pluginwire"},
		{module + "internal/pluginwire", module + "internal/pluginwire/mapperpb"},
		{module + "internal/pluginwire", module + "sdk"},
		{module + "plugins/aep", module + "internal/release"},
		{module + "host/storesink", module + "host/store"},
		{module + "host/pipeline", module + "host/captured"},
		{module + "host/cli", module + "host/recording"},
	}
	for _, g := range good {
		if why := violates(g[0], g[1]); why != "" {
			t.Errorf("%s → %s flagged: %s", g[0], g[1], why)
		}
	}
}
