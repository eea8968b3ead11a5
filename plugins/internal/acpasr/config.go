package acpasr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
)

// Config is the recording configuration of a plugin that records ACP: its
// configuration section (JSON; empty means defaults), parsed by ParseConfig.
//
//	{"agentName": "com.example.agent",    // reverse-DNS name for agent.name (ASR-703), wins over the registry
//	 "registry": {"agents": [{"id": "…", "name": "…"}]},  // replaces the embedded registry
//	 "humanPrompts": true,                 // the client relays a person's input: prompts get author "human" (ASR-713)
//	 "checkSchema": false,                 // do not check frames against the ACP JSON Schema (default: check)
//	 "partialEvery": 50}                   // a partial snapshot of an open entity every 50 updates (default 0: off)
type Config struct {
	AgentName    string    `json:"agentName,omitempty"`
	Registry     *Registry `json:"registry,omitempty"`
	HumanPrompts bool      `json:"humanPrompts,omitempty"`
	// CheckSchema: nil or true checks every frame against the official
	// ACP schema (see schemacheck.go); false turns the check off.
	CheckSchema *bool `json:"checkSchema,omitempty"`
	// PartialEvery > 0 writes a snapshot of an entity that is not final
	// yet once it has folded that many live updates since its last record
	// (ASR-705's MAY, for crash safety): status "partial" where the record
	// type has one, superseded when the entity becomes final. The trigger
	// counts updates, never time, so a rebuild writes the same records.
	// 0 (the default) writes records only when entities become final.
	PartialEvery int `json:"partialEvery,omitempty"`
}

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("bad config")

var reverseDNS = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9_-]*[A-Za-z0-9])?)+$`)

// ParseConfig decodes and validates raw; unknown members are errors, so a
// misspelt option is not silently ignored. Without a registry, the
// embedded snapshot (registry.json) is used.
func ParseConfig(raw []byte) (Config, error) {
	var c Config
	if len(bytes.TrimSpace(raw)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return Config{}, fmt.Errorf("%w: %w", ErrConfig, err)
		}
	}
	if c.AgentName != "" && !reverseDNS.MatchString(c.AgentName) {
		return Config{}, fmt.Errorf("%w: agentName %q is not a reverse-DNS name", ErrConfig, c.AgentName)
	}
	if c.PartialEvery < 0 {
		return Config{}, fmt.Errorf("%w: partialEvery %d is negative (0 turns partial snapshots off)", ErrConfig, c.PartialEvery)
	}
	if c.Registry == nil {
		r := loadDefaultRegistry()
		c.Registry = &r
	}
	return c, nil
}

// agentName resolves agent.name for info.name (ASR-703): the configured
// name, else the registry's, else the reserved fallback.
func (c Config) agentName(infoName string) string {
	if c.AgentName != "" {
		return c.AgentName
	}
	if id, ok := c.Registry.lookup(infoName); ok {
		return id
	}
	return fallbackName(infoName)
}
