package recording

import (
	"context"
	"encoding/json"
	"fmt"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/builtin"
	"github.com/acptap/acptap/host/config"
	"github.com/acptap/acptap/host/pipeline"
	"github.com/acptap/acptap/host/pluginhost"
	"github.com/acptap/acptap/host/wire"
)

// Plugins is what a command maps connections with, read from its config:
// the plugin catalog, the revisions table (disabled plugins dropped), how
// plugins start, and the pipeline's limits. It is the one place the
// pipeline's options are assembled from config; record, rebuild, convert
// and the finisher each take them from here.
type Plugins struct {
	cfg    *config.Config
	cat    *pluginhost.Catalog
	logger hclog.Logger
	launch func(context.Context, pluginhost.Spec, hclog.Logger) (*pluginhost.Instance, error)
}

// NewPlugins reads cfg's plugin settings; self is the acptap binary (the
// built-in plugins run out of process from it).
func NewPlugins(cfg *config.Config, self string, logger hclog.Logger) (*Plugins, error) {
	cat, err := Catalog(cfg, self)
	if err != nil {
		return nil, err
	}
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	return &Plugins{cfg: cfg, cat: cat, logger: logger, launch: pluginhost.Launch}, nil
}

// Catalog builds the plugin catalog from the config.
func Catalog(cfg *config.Config, self string) (*pluginhost.Catalog, error) {
	cat := &pluginhost.Catalog{Self: self, Builtins: builtin.Names(), PluginPath: cfg.PluginPath,
		Paths: map[string]string{}, Checksums: map[string]string{}, Configs: map[string][]byte{}}
	for name, pc := range cfg.Plugins {
		if pc.Path != "" {
			cat.Paths[name] = pc.Path
		}
		if pc.SHA256 != "" {
			cat.Checksums[name] = pc.SHA256
		}
		if len(pc.Config) > 0 {
			b, err := json.Marshal(pc.Config)
			if err != nil {
				return nil, fmt.Errorf("plugins.%s.config: %w", name, err)
			}
			cat.Configs[name] = b
		}
	}
	return cat, nil
}

// Revisions is the config's revisions table without disabled plugins. A revision stays in
// it when its list is (or becomes) empty: the list is what attaches, so an empty one
// attaches nothing, not the plugins that claim the revision.
func Revisions(cfg *config.Config) map[string][]string {
	out := map[string][]string{}
	for rev, names := range cfg.Revisions {
		out[rev] = []string{}
		for _, n := range names {
			if pc, ok := cfg.Plugins[n]; ok && pc.Disabled {
				continue
			}
			out[rev] = append(out[rev], n)
		}
	}
	return out
}

// Catalog is the plugin catalog.
func (p *Plugins) Catalog() *pluginhost.Catalog { return p.cat }

// Template is what every connection's pipeline shares: revisions, plugin
// configs, the launcher, the logger and the limits. The caller sets what
// is the connection's own (wire path, connection, agent, mode, sink,
// sessions) and its routing.
func (p *Plugins) Template() pipeline.Options {
	cfg := p.cfg
	return pipeline.Options{
		Revisions: Revisions(cfg), SchemaRevision: cfg.SchemaRevision,
		DefaultRevision: pipeline.Revision(2, cfg.SchemaRevision),
		Configs:         p.cat.Configs, Launch: p.launcher(), Logger: p.logger,
		BatchFrames: cfg.Tee.BatchFrames, MaxRestarts: cfg.Restart.Max, StallTimeout: cfg.Restart.StallTimeout,
	}
}

// Options are Template with the routing of a connection of agent.
func (p *Plugins) Options(agent []string) pipeline.Options {
	o := p.Template()
	o.Routing = p.Routing(agent)
	return o
}

// ForHeader are the options of a connection mapped again from its wire
// log (the finisher): routed by the agent its header names.
func (p *Plugins) ForHeader(hdr wire.Header) pipeline.Options { return p.Options(hdr.Agent.Command) }

// Import are the options of a stored log of the revision from converted
// into the store (acptap convert): the revision is known, so only the
// revisions table routes it.
func (p *Plugins) Import(from string) pipeline.Options {
	o := p.Template()
	o.DefaultRevision = from
	return o
}

// Routing is what a pipeline needs beyond the revisions table: the plugins
// that claim a revision the table is silent on, and the schema revision
// configured for the agent command.
func (p *Plugins) Routing(agent []string) pipeline.Routing {
	a, key, _ := p.cfg.AgentFor(agent)
	return pipeline.Routing{Claims: newClaimIndex(p.cat, p.cfg, p.logger).claimers, AgentSchemaRevision: a.SchemaRevision, AgentRule: key}
}

// background makes the plugins start below the tee's CPU priority (record).
func (p *Plugins) background() { p.launch = pluginhost.LaunchBackground }

// launcher starts plugins out of process through the catalog.
func (p *Plugins) launcher() pipeline.Launcher {
	cat, logger, launch := p.cat, p.logger, p.launch
	return func(ctx context.Context, name string) (*pipeline.Plugin, error) {
		spec, err := cat.Resolve(name)
		if err != nil {
			return nil, err
		}
		inst, err := launch(ctx, spec, logger)
		if err != nil {
			return nil, err
		}
		return &pipeline.Plugin{Name: name, Info: inst.Info, Mapper: inst.Mapper, Kill: inst.Kill}, nil
	}
}
