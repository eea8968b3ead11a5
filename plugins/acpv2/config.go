package acpv2

import (
	"fmt"

	"github.com/acptap/acptap/plugins/internal/acpasr"
)

// Config is the plugin's configuration section (JSON; empty means
// defaults): the engine's recording configuration.
//
//	{"agentName": "com.example.agent",    // reverse-DNS name for agent.name (ASR-703), wins over the registry
//	 "registry": {"agents": [{"id": "…", "name": "…"}]},  // replaces the embedded registry
//	 "humanPrompts": true,                 // the client relays a person's input: prompts get author "human" (ASR-713)
//	 "checkSchema": false,                 // do not check frames against the ACP JSON Schema (default: check)
//	 "partialEvery": 50}                   // a partial snapshot of an open entity every 50 updates (default 0: off)
type Config = acpasr.Config

// ErrConfig is wrapped by every configuration error.
var ErrConfig = acpasr.ErrConfig

// parseConfig decodes and validates raw; unknown members are errors.
func parseConfig(raw []byte) (Config, error) {
	c, err := acpasr.ParseConfig(raw)
	if err != nil {
		return Config{}, fmt.Errorf("acpv2: %w", err)
	}
	return c, nil
}
