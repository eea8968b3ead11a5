// Package builtin is the one place the host reaches the plugins in this
// repository: an explicit factory map. Every built-in still runs out of
// process (the acptap binary re-executed in plugin mode).
package builtin

import (
	"sort"

	"github.com/acptap/acptap/plugins/acpv1"
	"github.com/acptap/acptap/plugins/acpv2"
	"github.com/acptap/acptap/plugins/acpv2a13"
	"github.com/acptap/acptap/plugins/aep"
	"github.com/acptap/acptap/sdk"
)

// Factories returns the built-in mappers by name.
func Factories() map[string]func() sdk.Mapper {
	return map[string]func() sdk.Mapper{
		acpv1.Name:    acpv1.New,
		acpv2.Name:    acpv2.New,
		acpv2a13.Name: acpv2a13.New,
		aep.Name:      aep.New,
	}
}

// Names returns the built-in plugin names, sorted.
func Names() []string {
	var n []string
	for k := range Factories() {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}
