package acpasr

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
)

// defaultRegistry is a snapshot of the public ACP agent registry (agent ids
// and display names; its "source" member says which). Config.Registry
// replaces it.
//
//go:embed registry.json
var defaultRegistry []byte

// FallbackPrefix is reserved for agents neither the registry nor the config
// names (ASR-703, ASR-602).
const FallbackPrefix = "org.agent-session.acp."

// Registry maps agents' info.name to registered names.
type Registry struct {
	Source string          `json:"source,omitempty"`
	Agents []RegistryAgent `json:"agents"`
}

// RegistryAgent is one registry entry: ID is the registered short (or
// reverse-DNS) name, Name the display name agents report as info.name.
type RegistryAgent struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

func loadDefaultRegistry() Registry {
	var r Registry
	if err := json.Unmarshal(defaultRegistry, &r); err != nil {
		panic(fmt.Sprintf("acpasr: embedded registry: %v", err)) // a build defect, not input
	}
	return r
}

// lookup finds the registered name for info.name: an exact display-name
// match first, then an exact id match, then a case-insensitive display-name
// match. Entries are tried in file order, so the first match wins.
func (r Registry) lookup(infoName string) (string, bool) {
	for _, try := range []func(RegistryAgent) bool{
		func(a RegistryAgent) bool { return a.Name == infoName },
		func(a RegistryAgent) bool { return a.ID == infoName },
		func(a RegistryAgent) bool { return strings.EqualFold(a.Name, infoName) },
	} {
		for _, a := range r.Agents {
			if a.ID != "" && try(a) {
				return a.ID, true
			}
		}
	}
	return "", false
}

// fallbackName is org.agent-session.acp.<label>: info.name lowercased, each
// run of characters outside a–z and 0–9 replaced by one "-", leading and
// trailing "-" removed. A name with no such character gets the label
// "unnamed" (the seed is silent on it).
func fallbackName(infoName string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(infoName) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	if b.Len() == 0 {
		return FallbackPrefix + "unnamed"
	}
	return FallbackPrefix + b.String()
}
