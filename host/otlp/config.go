package otlp

import (
	"path/filepath"

	"github.com/acptap/acptap/host/config"
	"github.com/acptap/acptap/sdk/aep"
)

// SpoolDir is where record spools, under the store root; ExportSpoolDir
// is acptap export's own spool, so that a backfill never mixes with what
// a recording is delivering.
func SpoolDir(storeRoot string) string { return filepath.Join(storeRoot, "otlp", "spool") }

// ExportSpoolDir is acptap export's spool under the store root.
func ExportSpoolDir(storeRoot string) string { return filepath.Join(storeRoot, "otlp", "export") }

// Enabled says whether record exports: otlp.enabled, or an otlp.endpoint.
func Enabled(c config.OTLP) bool { return c.Enabled || c.Endpoint != "" }

// SettingsOf maps the [otlp] section to Settings.
func SettingsOf(c config.OTLP) Settings {
	return Settings{Endpoint: c.Endpoint, Protocol: c.Protocol, Headers: c.Headers, Timeout: c.Timeout, Insecure: c.Insecure, Compression: c.Compression}
}

// MaxCaptureOf parses otlp.max_capture (validated by config; default
// metadata).
func MaxCaptureOf(c config.OTLP) aep.Level {
	if l, err := aep.ParseLevel(c.MaxCapture); err == nil {
		return l
	}
	return aep.Metadata
}
