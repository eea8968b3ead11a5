package pluginwire

import (
	plugin "github.com/hashicorp/go-plugin"
)

// WireVersion is the host ⇄ plugin wire version: go-plugin's handshake
// ProtocolVersion, and the version of internal/pluginwire/mapper.proto. It
// is not the ACP revision a plugin maps (that is Info.Inputs).
const WireVersion = 1

// PluginKey names the mapper service in go-plugin's plugin set.
const PluginKey = "mapper"

// MaxMessageSize is the largest gRPC message either side accepts.
const MaxMessageSize = 64 << 20

// PartSize is the most line bytes one Frame message carries, and the most
// JSON bytes one Output message carries; larger values travel in parts.
// Kept well under MaxMessageSize so that a batch of parts always fits.
const PartSize = 4 << 20

// responseBudget is the size at which a plugin starts a new MapResponse.
const responseBudget = 16 << 20

// Handshake is the fixed go-plugin handshake. The cookie only stops a user
// from running a plugin binary by hand; it is not a security measure.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  WireVersion,
	MagicCookieKey:   "ACPTAP_PLUGIN_MAGIC_COOKIE",
	MagicCookieValue: "9c6e0a3b1f4d4e0f8a7d2b5c3e1f6a90-acptap-mapper",
}
