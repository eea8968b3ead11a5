package recording

import (
	"slices"
	"testing"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/builtin"
	"github.com/acptap/acptap/host/config"
	"github.com/acptap/acptap/host/pluginhost"
)

// TestClaimersOrderAndDisabled: the built-ins that claim alpha.13 are
// acpv2a13 (it outputs ASR: the primary) then aep; a disabled plugin never
// counts; a revision nobody claims gets none. (External plugins are asked
// by starting them: internal/e2e TestDroppedInPluginIsSelectedByClaim.)
func TestClaimersOrderAndDisabled(t *testing.T) {
	cat := &pluginhost.Catalog{Self: "acptap", Builtins: builtin.Names()}
	cfg := &config.Config{Plugins: map[string]config.PluginConfig{}}
	ci := newClaimIndex(cat, cfg, hclog.NewNullLogger())
	if got := ci.claimers("acp/2@2.0.0-alpha.13"); !slices.Equal(got, []string{"acpv2a13", "aep"}) {
		t.Errorf("claimers = %v, want [acpv2a13 aep]", got)
	}
	if got := ci.claimers("acp/2@2.0.0-alpha.9"); !slices.Equal(got, []string{"acpv2", "aep"}) {
		t.Errorf("alpha.9 claimers = %v", got)
	}
	if got := ci.claimers("acp/3"); len(got) != 0 {
		t.Errorf("acp/3 claimers = %v", got)
	}
	cfg.Plugins["aep"] = config.PluginConfig{Disabled: true}
	if got := newClaimIndex(cat, cfg, hclog.NewNullLogger()).claimers("acp/2@2.0.0-alpha.13"); !slices.Equal(got, []string{"acpv2a13"}) {
		t.Errorf("with aep disabled: %v", got)
	}
}
