package sdk

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps keeps what a vendor plugin links small (tailscale's deps tests
// are the model): the whole dependency closure, from `go list -deps`, of
// the packages an author imports holds none of the bad ones. The models
// (sdk/asr, sdk/aep) and the types carry no JSON Schema validator, no localisation tables of
// golang.org/x/text and no RPC stack; a plugin binary (sdk/plugin) has
// the RPC stack it needs to talk to the host (gRPC brings x/text's small
// IDNA packages), but still no validator and no localisation.
func TestDeps(t *testing.T) {
	validator := []string{"github.com/santhosh-tekuri/jsonschema/", "golang.org/x/text/message/", "golang.org/x/text/language/", "golang.org/x/text/feature/"}
	rpc := []string{"google.golang.org/grpc", "google.golang.org/protobuf/", "github.com/hashicorp/go-plugin", "golang.org/x/text/"}
	for _, tt := range []struct {
		pkg string
		bad []string
	}{
		{"github.com/acptap/acptap/sdk/asr", append(append([]string(nil), validator...), rpc...)},
		{"github.com/acptap/acptap/sdk", append(append([]string(nil), validator...), rpc...)},
		{"github.com/acptap/acptap/sdk/aep", append(append([]string(nil), validator...), rpc...)},
		{"github.com/acptap/acptap/sdk/plugin", validator},
	} {
		out, err := exec.Command("go", "list", "-deps", tt.pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", tt.pkg, err)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 5 {
			t.Fatalf("go list -deps %s gave %d packages; the check would prove nothing", tt.pkg, len(deps))
		}
		for _, d := range deps {
			if b := badDep(d, tt.bad); b != "" {
				t.Errorf("%s depends on %s (no %s in what a plugin author imports)", tt.pkg, d, b)
			}
		}
	}
}

// badDep returns the entry of bad that dep is (an exact path, or a prefix
// ending in "/"), or "".
func badDep(dep string, bad []string) string {
	for _, b := range bad {
		if dep == strings.TrimSuffix(b, "/") || strings.HasSuffix(b, "/") && strings.HasPrefix(dep, b) {
			return b
		}
	}
	return ""
}

// TestDepsCanFail: the same check flags sdk/asr/asrcheck, the validator
// beside the model, which does pull in jsonschema and x/text's
// localisation (so TestDeps is not vacuous).
func TestDepsCanFail(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/acptap/acptap/sdk/asr/asrcheck").Output()
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, d := range strings.Fields(string(out)) {
		if b := badDep(d, []string{"github.com/santhosh-tekuri/jsonschema/", "golang.org/x/text/message/"}); b != "" {
			found[b] = true
		}
	}
	if len(found) != 2 {
		t.Errorf("the check found %v in asrcheck's closure, want both jsonschema and x/text/message", found)
	}
}
