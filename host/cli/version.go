package cli

import (
	"fmt"

	"github.com/acptap/acptap/internal/pluginwire"
	"github.com/acptap/acptap/internal/release"
)

// Version is set at build time with -ldflags "-X github.com/acptap/acptap/host/cli.Version=…";
// otherwise it is release.Version, the one version string the built-in plugins also carry.
var Version = ""

func version() string {
	if Version != "" {
		return Version
	}
	return release.Version
}

func runVersion(env *Env, args []string) int {
	fs := newFlagSet(env, "version", "", "Prints acptap's version and the plugin wire version.")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	fmt.Fprintf(env.Stdout, "acptap %s (plugin wire v%d)\n", version(), pluginwire.WireVersion)
	return ExitOK
}
