package aep

import (
	"context"

	"github.com/acptap/acptap/internal/release"
	"github.com/acptap/acptap/sdk"
)

const (
	// Name is the plugin's name.
	Name = "aep"
	// Version is the plugin's version.
	Version = release.Version
	// Agent is the envelope's agent: the tee observes a protocol, not a
	// vendor.
	Agent = "acp"
)

// Inputs are the protocol revisions the plugin maps.
var Inputs = []string{"acp/1", "acp/2@2.0.0-alpha.9", InputAlpha13, "acp-v1-log"}

// InputAlpha13 is the newer ACP v2 draft (SDK 2.3.0/2.4.0). It maps as
// alpha.9 does, and a session/archive of a session open on the connection
// ends it as session/close does (the draft: archiving an active session
// closes it first); its other additions are x.acp.* events.
const InputAlpha13 = "acp/2@2.0.0-alpha.13"

type mapper struct{}

var _ sdk.Mapper = mapper{}

// New returns the ACP → AEP mapper.
func New() sdk.Mapper { return mapper{} }

// Info describes the plugin.
func (mapper) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{
		Name:         Name,
		Version:      Version,
		Description:  "ACP v1 and v2 (schema 2.0.0-alpha.9) → AEP 0.1 events, one event log per ACP session",
		Inputs:       append([]string(nil), Inputs...),
		Outputs:      []sdk.Format{sdk.FormatAEP},
		Capabilities: []sdk.Capability{sdk.CapabilityRecord, sdk.CapabilityConvert},
	}, nil
}

// Start opens the mapping of one connection. Only a bad Config is an error.
func (mapper) Start(_ context.Context, req sdk.StartRequest) (sdk.Session, error) {
	cfg, err := parseConfig(req.Config)
	if err != nil {
		return nil, err
	}
	return newConn(cfg.resolve(osEnv{}), req), nil
}
