package testpeers

import "github.com/acptap/acptap/internal/acpschema"

// The checker lives in internal/acpschema (the recording engine uses it too);
// these are its names here, for the tests that predate the move.

// Version selects the ACP schema a Checker validates against.
type Version = acpschema.Version

const (
	// V1 is ACP protocolVersion 1, the stable v1 schema.
	V1 = acpschema.V1
	// V2 is the ACP v2 draft 2.0.0-alpha.9, full unstable schema.
	V2 = acpschema.V2
	// V2Alpha13 is the newer ACP v2 draft 2.0.0-alpha.13 (SDK 2.4.0).
	V2Alpha13 = acpschema.V2Alpha13
)

// SchemaBytes returns the embedded official schema for v.
func SchemaBytes(v Version) []byte { return acpschema.SchemaBytes(v) }
