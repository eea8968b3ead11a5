package cli

import (
	"os"
	"os/signal"
	"syscall"
)

// keepSIGPIPE makes a write to a stdout the editor has closed fail with
// EPIPE instead of killing acptap (Go's default for descriptors 1 and 2):
// the tee then closes the agent's stdout, so the agent sees EPIPE as it
// would without acptap, and the wire log of a session that ends this way in
// its first milliseconds is still written (issue 18.3). A caught signal is
// reset to the default in the agent and the plugins, unlike an ignored one.
func keepSIGPIPE() {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
}
