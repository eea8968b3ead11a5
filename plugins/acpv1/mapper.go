package acpv1

import (
	"context"
	"fmt"

	"github.com/acptap/acptap/internal/acpschema"
	"github.com/acptap/acptap/internal/release"
	"github.com/acptap/acptap/plugins/internal/acpasr"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

const (
	// Name is the plugin's name.
	Name = "acpv1"
	// Version is the plugin's version, written as producer.version and
	// producer.plugin.version.
	Version = release.Version
	// Input is the protocol revision of live ACP v1 connections.
	Input = "acp/1"
	// InputLog is the input kind of stored ACP v1 logs (acptap convert).
	InputLog = "acp-v1-log"
	// SourceFormatVersion is producer.source.formatVersion: ACP v1 (its
	// wire protocol version; the logs name no schema revision).
	SourceFormatVersion = "1"
)

// ErrConfig is wrapped by every configuration error.
var ErrConfig = acpasr.ErrConfig

type mapper struct{}

var _ sdk.Mapper = mapper{}

// New returns the ACP v1 → ASR mapper.
func New() sdk.Mapper { return mapper{} }

// Warm compiles the ACP v1 schema each v1 line is checked against (once
// per process; acpv2's Warm), so that a plugin process does it while the
// host connects, not on the first frame.
func (mapper) Warm() { _, _ = acpschema.NewChecker(acpschema.V1Unstable) }

// Info describes the plugin.
func (mapper) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{
		Name:         Name,
		Version:      Version,
		Description:  "ACP v1 (live connections and stored logs) → ASR streams, one per ACP session, losses declared",
		Inputs:       []string{Input, InputLog},
		Outputs:      []sdk.Format{sdk.FormatASR},
		Capabilities: []sdk.Capability{sdk.CapabilityRecord, sdk.CapabilityConvert, sdk.CapabilityReplay},
	}, nil
}

// Start opens the mapping of one connection (live, rebuilt from its wire
// log, or converted from a stored log). Only a bad Config is an error; the
// configuration is the engine's (acpasr.Config: agentName, registry,
// humanPrompts).
func (mapper) Start(_ context.Context, req sdk.StartRequest) (sdk.Session, error) {
	cfg, err := acpasr.ParseConfig(req.Config)
	if err != nil {
		return nil, fmt.Errorf("acpv1: %w", err)
	}
	return newTranslator(options(cfg, req.Mode), req), nil
}

// options are the engine options: a converter for stored logs, a recorder
// for live traffic and its rebuild (ASR-700), ACP v1 as the source, and
// the losses that always apply to ACP v1.
func options(cfg acpasr.Config, mode sdk.Mode) acpasr.Options {
	method := acpasr.MethodRecorder
	if mode == sdk.ModeConvert {
		method = acpasr.MethodConverter
	}
	return acpasr.Options{
		Method:      method,
		Version:     Version,
		Plugin:      asr.Plugin{Name: Name, Version: Version},
		Source:      asr.Source{Format: "acp", FormatVersion: SourceFormatVersion},
		AlwaysLossy: append(append([]string(nil), acpasr.AlwaysLossy...), asr.LossV1TurnState),
		Config:      cfg,
		ModeUpdates: true,
		// Unstable: a superset of stable v1 (its unstable methods and
		// members are what real agents already send).
		Schema: acpschema.V1Unstable,
	}
}
