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

// rule says which module-internal imports a package may have.
func violates(from, to string) string {
	f := strings.TrimPrefix(from, module)
	t := strings.TrimPrefix(to, module)
	switch {
	case strings.HasPrefix(f, "sdk") && (strings.HasPrefix(t, "host") || strings.HasPrefix(t, "plugins") || strings.HasPrefix(t, "examples")):
		return "sdk never imports host, plugins or examples"
	case strings.HasPrefix(f, "plugins/") && !strings.HasPrefix(t, "sdk") && !strings.HasPrefix(t, strings.Join(strings.SplitN(f, "/", 3)[:2], "/")):
		return "a plugin imports only sdk (and its own packages)"
	case strings.HasPrefix(f, "host/") && strings.HasPrefix(t, "plugins/") && f != "host/builtin":
		return "host reaches plugins only through host/builtin"
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
	}
	for _, g := range good {
		if why := violates(g[0], g[1]); why != "" {
			t.Errorf("%s → %s flagged: %s", g[0], g[1], why)
		}
	}
}
