package acpv2

import (
	"context"

	"github.com/acptap/acptap/internal/acpschema"
	"github.com/acptap/acptap/internal/release"
	"github.com/acptap/acptap/plugins/internal/acpasr"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

const (
	// Name is the plugin's name.
	Name = "acpv2"
	// Version is the plugin's version, written as producer.version and
	// producer.plugin.version.
	Version = release.Version
	// Input is the protocol revision the plugin maps.
	Input = "acp/2@2.0.0-alpha.9"
	// SourceFormatVersion is the ACP schema revision (ASR-700).
	SourceFormatVersion = acpasr.FormatVersionV2
)

type mapper struct{}

var _ sdk.Mapper = mapper{}

// New returns the ACP v2 → ASR mapper.
func New() sdk.Mapper { return mapper{} }

// Warm compiles the ACP schema the check needs (once per process), so that
// a plugin process does it while the host connects, not on the first frame.
func (mapper) Warm() { _, _ = acpschema.NewChecker(acpschema.V2) }

// Info describes the plugin.
func (mapper) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{
		Name:         Name,
		Version:      Version,
		Description:  "ACP v2 (schema 2.0.0-alpha.9) → ASR streams, one per ACP session",
		Inputs:       []string{Input},
		Outputs:      []sdk.Format{sdk.FormatASR},
		Capabilities: []sdk.Capability{sdk.CapabilityRecord, sdk.CapabilityReplay},
	}, nil
}

// options are the engine options of the plugin with configuration cfg:
// a recorder of ACP v2 at alpha.9 (ASR-700).
func options(cfg Config) acpasr.Options {
	return acpasr.Options{
		Method:      acpasr.MethodRecorder,
		Version:     Version,
		Plugin:      asr.Plugin{Name: Name, Version: Version},
		Source:      asr.Source{Format: "acp", FormatVersion: SourceFormatVersion},
		AlwaysLossy: acpasr.AlwaysLossy,
		Config:      cfg,
	}
}

// Start opens the mapping of one connection. Only a bad Config is an error.
func (mapper) Start(_ context.Context, req sdk.StartRequest) (sdk.Session, error) {
	cfg, err := parseConfig(req.Config)
	if err != nil {
		return nil, err
	}
	return acpasr.NewSession(options(cfg), req), nil
}
