package acpv2a13

import (
	"context"
	"fmt"

	"github.com/acptap/acptap/internal/acpschema"
	"github.com/acptap/acptap/plugins/internal/acpasr"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

const (
	// Name is the plugin's name.
	Name = "acpv2a13"
	// Version is the plugin's version, written as producer.version and
	// producer.plugin.version.
	Version = "0.1.0"
	// SchemaRevision is the ACP v2 draft the plugin maps.
	SchemaRevision = "2.0.0-alpha.13"
	// Input is the protocol revision the plugin claims.
	Input = "acp/2@" + SchemaRevision
	// SourceFormatVersion is producer.source.formatVersion (ASR-700).
	SourceFormatVersion = SchemaRevision
)

// ErrConfig is wrapped by every configuration error.
var ErrConfig = acpasr.ErrConfig

type mapper struct{}

var _ sdk.Mapper = mapper{}

// New returns the ACP v2 (2.0.0-alpha.13) → ASR mapper.
func New() sdk.Mapper { return mapper{} }

// Warm compiles the draft's schema (acpv2's Warm).
func (mapper) Warm() { _, _ = acpschema.NewChecker(acpschema.V2Alpha13) }

// Info describes the plugin.
func (mapper) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{
		Name:         Name,
		Version:      Version,
		Description:  "ACP v2 (schema 2.0.0-alpha.13, SDK 2.3.0/2.4.0) → ASR streams, one per ACP session",
		Inputs:       []string{Input},
		Outputs:      []sdk.Format{sdk.FormatASR},
		Capabilities: []sdk.Capability{sdk.CapabilityRecord},
	}, nil
}

// Start opens the mapping of one connection. Only a bad Config is an
// error; the configuration is the engine's (acpasr.Config).
func (mapper) Start(_ context.Context, req sdk.StartRequest) (sdk.Session, error) {
	cfg, err := acpasr.ParseConfig(req.Config)
	if err != nil {
		return nil, fmt.Errorf("acpv2a13: %w", err)
	}
	return newTranslator(options(cfg), req), nil
}

// options are the engine options: a recorder of the alpha.13 draft,
// checked against its own schema, with the knobs for what alpha.9 did not
// have.
func options(cfg acpasr.Config) acpasr.Options {
	return acpasr.Options{
		Method:       acpasr.MethodRecorder,
		Version:      Version,
		Plugin:       asr.Plugin{Name: Name, Version: Version},
		Source:       asr.Source{Format: "acp", FormatVersion: SourceFormatVersion},
		AlwaysLossy:  acpasr.AlwaysLossy,
		Config:       cfg,
		Schema:       acpschema.V2Alpha13,
		StateNative:  []string{"background"},
		TerminalSize: true,
		MessageRefs:  true,
		// The draft's subagent_update names the child's cwd and
		// additional directories: the child stream's roots.
		SubagentRoots: true,
		// Its chunks name no session: one before any upsert waits for it.
		HoldChunks: true,
	}
}
