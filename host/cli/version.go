package cli

import (
	"fmt"
	"runtime/debug"

	"github.com/acptap/acptap/sdk"
)

// Version is set at build time with -ldflags "-X github.com/acptap/acptap/host/cli.Version=…";
// otherwise the module version from the build info is used.
var Version = ""

func version() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "0.1.0-dev"
}

func runVersion(env *Env, args []string) int {
	fs := newFlagSet(env, "version", "", "Prints acptap's version and the plugin wire version.")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	fmt.Fprintf(env.Stdout, "acptap %s (plugin wire v%d)\n", version(), sdk.WireVersion)
	return ExitOK
}
