package sdk

import (
	"strings"
	"testing"
)

// TestInfoCheck: Info.Check accepts a complete Info with the known names
// and names what is wrong otherwise.
func TestInfoCheck(t *testing.T) {
	good := Info{Name: "acme", Version: "1.0.0", Inputs: []string{"_acme/*"},
		Outputs: []Format{FormatASR, FormatAEP}, Capabilities: []Capability{CapabilityRecord, CapabilityConvert, CapabilityReplay}}
	if err := good.Check(); err != nil {
		t.Fatalf("complete Info: %v", err)
	}
	if !good.Writes(FormatAEP) || !good.Can(CapabilityReplay) {
		t.Error("Writes/Can miss a claimed name")
	}
	for _, tt := range []struct {
		name string
		edit func(*Info)
		want string
	}{
		{"no name", func(i *Info) { i.Name = "" }, "incomplete"},
		{"no version", func(i *Info) { i.Version = "" }, "incomplete"},
		{"no inputs", func(i *Info) { i.Inputs = nil }, "incomplete"},
		{"no outputs", func(i *Info) { i.Outputs = nil }, "incomplete"},
		{"no capabilities", func(i *Info) { i.Capabilities = nil }, "incomplete"},
		{"unknown format", func(i *Info) { i.Outputs = []Format{FormatASR, "_acme/progress"} }, `unknown output format "_acme/progress"`},
		{"unknown capability", func(i *Info) { i.Capabilities = []Capability{"record", "stream"} }, `unknown capability "stream"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			i := good
			tt.edit(&i)
			err := i.Check()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Check() = %v, want an error with %q", err, tt.want)
			}
		})
	}
	if (Info{Outputs: []Format{FormatASR}}).Writes(FormatAEP) {
		t.Error("Writes claims a format not listed")
	}
}
