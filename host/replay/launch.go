package replay

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/pipeline"
	"github.com/acptap/acptap/host/pluginhost"
	"github.com/acptap/acptap/host/recording"
	ireplay "github.com/acptap/acptap/internal/replay"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// The ACP versions `replay --to` and `roundtrip --via` take.
const (
	ProtoV2 = "acp-v2"
	ProtoV1 = "acp-v1"
)

// ValidProto reports whether p is ProtoV2 or ProtoV1.
func ValidProto(p string) bool { return p == ProtoV2 || p == ProtoV1 }

// Plugins starts replay plugins out of process from the configuration.
type Plugins struct {
	Catalog *pluginhost.Catalog
	// Revisions maps an input revision ("acp/2@…", "acp/1") to the plugins
	// configured for it (disabled ones left out).
	Revisions map[string][]string
	// SchemaRevision is the configured ACP v2 revision (config
	// schema_revision): a v2 replay's default target.
	SchemaRevision string
	Logger         hclog.Logger
	// Pipeline is what the round trip's pipeline shares with every other
	// (limits, restarts, the launcher a restart starts the plugin again
	// with): recording.Plugins.Template.
	Pipeline pipeline.Options
}

// NewPlugins takes the replay plugins from the configuration as the
// recording lifecycle reads it (host/recording): the same catalog,
// revisions table and pipeline limits record and rebuild use.
func NewPlugins(rp *recording.Plugins) *Plugins {
	t := rp.Template()
	return &Plugins{Catalog: rp.Catalog(), Revisions: t.Revisions, SchemaRevision: t.SchemaRevision, Logger: t.Logger, Pipeline: t}
}

// Plugin is a plugin process with the replay capability.
type Plugin struct {
	inst   *pluginhost.Instance
	rep    sdk.Replayer
	config []byte
	target string
}

// Kill stops the plugin process.
func (p *Plugin) Kill() { p.inst.Kill() }

// Launch starts the replay plugin for an ACP version (ProtoV2, ProtoV1):
// the named one, or the first plugin configured for the version's revision
// (the configured ACP v2 revision; "acp/1") whose Info claims "replay",
// the built-in one (acpv2, acpv1) last.
func (ps *Plugins) Launch(ctx context.Context, name, proto string) (*Plugin, error) {
	switch proto {
	case ProtoV2:
		return ps.launchFor(ctx, name, "acp/2@"+ps.SchemaRevision, "acpv2")
	case ProtoV1:
		return ps.launchFor(ctx, name, ireplay.TargetV1, "acpv1")
	}
	return nil, fmt.Errorf("unknown ACP version %q", proto)
}

func (ps *Plugins) launchFor(ctx context.Context, name, target, fallback string) (*Plugin, error) {
	candidates := []string{name}
	if name == "" {
		candidates = slices.Clone(ps.Revisions[target])
		if !slices.Contains(candidates, fallback) {
			candidates = append(candidates, fallback)
		}
	}
	var errs []string
	for _, n := range candidates {
		spec, err := ps.Catalog.Resolve(n)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		inst, err := pluginhost.Launch(ctx, spec, ps.logger())
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		rep, ok := inst.Mapper.(sdk.Replayer)
		if !ok || !slices.Contains(inst.Info.Capabilities, "replay") {
			inst.Kill()
			errs = append(errs, fmt.Sprintf("plugin %s has no replay capability", n))
			continue
		}
		return &Plugin{inst: inst, rep: rep, config: spec.Config, target: target}, nil
	}
	return nil, fmt.Errorf("no replay plugin for %s: %s", target, strings.Join(errs, "; "))
}

func (ps *Plugins) logger() hclog.Logger {
	if ps.Logger == nil {
		return hclog.NewNullLogger()
	}
	return ps.Logger
}

// ReplayFile replays the stream at path through the plugin and returns the
// loss report.
func (p *Plugin) ReplayFile(ctx context.Context, path string, emit func(sdk.Output) error) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return p.replayAs(ctx, f, streamTarget(f, p.target), emit)
}

// streamTarget is the revision a stream is replayed to: when def is an
// ACP v2 revision, the ACP v2 draft the stream's header names
// (producer.source.formatVersion, e.g. "2.0.0-alpha.13" →
// "acp/2@2.0.0-alpha.13"), so a stream of the newer draft is replayed as
// that draft's frames; else def (an ACP v1 replay stays ACP v1). f is left
// at its start.
func streamTarget(f *os.File, def string) string {
	if !strings.HasPrefix(def, "acp/2") {
		return def
	}
	defer f.Seek(0, io.SeekStart)
	line, err := asr.NewReader(f).Next() // the header: a committed line, bounded
	if err != nil {
		return def
	}
	var h struct {
		Producer struct {
			Source struct {
				Format        string `json:"format"`
				FormatVersion string `json:"formatVersion"`
			} `json:"source"`
		} `json:"producer"`
	}
	if json.Unmarshal(line, &h) != nil || h.Producer.Source.Format != "acp" || !strings.HasPrefix(h.Producer.Source.FormatVersion, "2.") {
		return def
	}
	return "acp/2@" + h.Producer.Source.FormatVersion
}

func (p *Plugin) replayAs(ctx context.Context, r io.Reader, target string, emit func(sdk.Output) error) ([]byte, error) {
	report, err := p.rep.Replay(ctx, p.config, target, r, emit)
	if err != nil {
		return nil, err
	}
	if _, err := ireplay.ParseLossReport(report); err != nil {
		return nil, fmt.Errorf("plugin %s: %w", p.inst.Spec.Name, err)
	}
	return report, nil
}

// Stream replays the stream at path through the plugin as ACP lines on out
// (one session/update notification a line) and returns the loss report;
// the plugin's diagnostics go to diag.
func Stream(ctx context.Context, p *Plugin, path string, out io.Writer, diag func(sdk.Output)) ([]byte, error) {
	bw := bufio.NewWriterSize(out, 64<<10)
	report, err := p.ReplayFile(ctx, path, func(o sdk.Output) error {
		switch o.Kind {
		case sdk.ACPFrame:
			bw.Write(o.JSON)
			return bw.WriteByte('\n')
		case sdk.Diagnostic:
			if diag != nil {
				diag(o)
			}
		}
		return nil
	})
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return report, nil
}
