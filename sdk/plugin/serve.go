package plugin

import (
	"github.com/acptap/acptap/internal/pluginwire"
	"github.com/acptap/acptap/sdk"
)

// Serve runs m as an acptap plugin: it answers the host's handshake on
// stdout and then serves the mapper until the host goes away. Logs go to
// stderr as hclog JSON, which the host relays under the plugin's name.
// Serve never returns while the host is alive; it exits the process when
// the host dies (even when the host was SIGKILLed).
//
//	func main() { plugin.Serve(acme.New()) }
func Serve(m sdk.Mapper) { pluginwire.Serve(m) }
