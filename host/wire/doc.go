// Package wire reads and writes the wire log, acptap's native capture
// (ASR-723): one JSON Lines file per connection holding a header and every
// observed frame or gap, in arrival order. It also scrubs MCP server
// configuration values from the captured copy of session requests (ASR-712)
// before they reach the file.
package wire
