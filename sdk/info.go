package sdk

import (
	"errors"
	"fmt"
	"slices"
)

// Info describes a plugin. Inputs are the revisions it claims
// ("acp/2@2.0.0-alpha.9", "acp/1", "acp-v1-log", "_acme/*"), Outputs the
// formats it writes, Capabilities what it can do.
type Info struct {
	Name         string
	Version      string
	Description  string
	Inputs       []string
	Outputs      []Format
	Capabilities []Capability
}

// Format is a family of outputs a plugin writes.
type Format string

const (
	// FormatASR: ASR streams (ASRHeader and ASRRecord outputs). A plugin
	// that writes ASR and is not a revision's primary plugin writes its own
	// stream, and continues its own stream on a later connection.
	FormatASR Format = "asr"
	// FormatAEP: AEP events (AEPEvent outputs).
	FormatAEP Format = "aep"
)

// Capability is something a plugin can do.
type Capability string

const (
	// CapabilityRecord: maps an ACP connection's frames, live or from a
	// wire log (Mapper.Start).
	CapabilityRecord Capability = "record"
	// CapabilityConvert: maps stored logs of another format (ModeConvert).
	CapabilityConvert Capability = "convert"
	// CapabilityReplay: turns an ASR stream back into ACP (the Mapper is a
	// Replayer too).
	CapabilityReplay Capability = "replay"
)

var (
	formats      = []Format{FormatASR, FormatAEP}
	capabilities = []Capability{CapabilityRecord, CapabilityConvert, CapabilityReplay}
)

// Writes reports whether the plugin claims the output format f.
func (i Info) Writes(f Format) bool { return slices.Contains(i.Outputs, f) }

// Can reports whether the plugin claims the capability c.
func (i Info) Can(c Capability) bool { return slices.Contains(i.Capabilities, c) }

// Check is where what a plugin claims is checked, for the host (on every
// plugin it starts) and for the conformance suite alike: a name and a
// version, at least one input, output and capability, and only the formats
// and capabilities above — a name the host does not know would otherwise be
// ignored without a word.
func (i Info) Check() error {
	var errs []error
	if i.Name == "" || i.Version == "" || len(i.Inputs) == 0 || len(i.Outputs) == 0 || len(i.Capabilities) == 0 {
		errs = append(errs, fmt.Errorf("incomplete info: name %q, version %q, %d inputs, %d outputs, %d capabilities (each needs one)",
			i.Name, i.Version, len(i.Inputs), len(i.Outputs), len(i.Capabilities)))
	}
	for _, f := range i.Outputs {
		if !slices.Contains(formats, f) {
			errs = append(errs, fmt.Errorf("unknown output format %q (known: %q)", f, formats))
		}
	}
	for _, c := range i.Capabilities {
		if !slices.Contains(capabilities, c) {
			errs = append(errs, fmt.Errorf("unknown capability %q (known: %q)", c, capabilities))
		}
	}
	return errors.Join(errs...)
}
