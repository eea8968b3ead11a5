package recording

import (
	"context"
	"slices"
	"sort"
	"sync"
	"time"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/builtin"
	"github.com/acptap/acptap/host/config"
	"github.com/acptap/acptap/host/pluginhost"
	"github.com/acptap/acptap/sdk"
)

// claimIndex answers which plugins claim an input revision in their Info
// (Inputs), for a revision the configuration's revisions table does not
// name: a plugin dropped into plugin_path that claims it is then
// selectable without editing config. Built-ins are asked in process; an
// external plugin is started once, asked, and stopped. Disabled plugins
// never count.
type claimIndex struct {
	cat    *pluginhost.Catalog
	cfg    *config.Config
	logger hclog.Logger
	mu     sync.Mutex
	infos  map[string]*sdk.Info // nil: the plugin could not be asked
}

func newClaimIndex(cat *pluginhost.Catalog, cfg *config.Config, logger hclog.Logger) *claimIndex {
	return &claimIndex{cat: cat, cfg: cfg, logger: logger, infos: map[string]*sdk.Info{}}
}

func (ci *claimIndex) info(name string) *sdk.Info {
	if i, ok := ci.infos[name]; ok {
		return i
	}
	ci.infos[name] = nil
	spec, err := ci.cat.Resolve(name)
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var info sdk.Info
	if newMapper, ok := builtin.Factories()[name]; ok && spec.Builtin {
		info, err = newMapper().Info(ctx)
	} else {
		var inst *pluginhost.Instance
		if inst, err = pluginhost.Launch(ctx, spec, ci.logger); err == nil {
			info = inst.Info
			inst.Kill()
		}
	}
	if err != nil {
		ci.logger.Warn("plugin could not be asked what it claims", "plugin", name, "error", err)
		return nil
	}
	ci.infos[name] = &info
	return &info
}

// claimers returns the plugins that claim rev, in the order the pipeline
// attaches them (the first is the primary): plugins that output ASR
// first, then built-ins before external plugins, then by name.
func (ci *claimIndex) claimers(rev string) []string {
	ci.mu.Lock()
	defer ci.mu.Unlock()
	type claimer struct {
		name          string
		asr, external bool
	}
	var list []claimer
	for _, n := range ci.cat.All() {
		if pc, ok := ci.cfg.Plugins[n]; ok && pc.Disabled {
			continue
		}
		info := ci.info(n)
		if info == nil || !slices.Contains(info.Inputs, rev) {
			continue
		}
		spec, _ := ci.cat.Resolve(n)
		list = append(list, claimer{n, info.Writes(sdk.FormatASR), !spec.Builtin})
	}
	sort.SliceStable(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if a.asr != b.asr {
			return a.asr
		}
		if a.external != b.external {
			return !a.external
		}
		return a.name < b.name
	})
	names := make([]string, len(list))
	for i, c := range list {
		names[i] = c.name
	}
	return names
}
