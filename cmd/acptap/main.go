// Command acptap records Agent Client Protocol sessions between an editor
// and a coding agent, and maps them into ASR streams and AEP events.
package main

import (
	"os"

	"github.com/acptap/acptap/host/cli"
)

func main() {
	cli.SetMemoryCeiling()
	os.Exit(cli.Main(os.Args[1:]))
}
