// Package pluginhost finds mapper plugins (built-ins, which run as the
// acptap binary re-executed in plugin mode, and external
// acptap-plugin-<name> binaries on the plugin path), verifies their
// configured sha256, starts them out of process over hashicorp/go-plugin,
// relays their logs, and fingerprints them through the Info call.
package pluginhost
