// Package cli is acptap's command line: the subcommands, their flags, and
// their exit codes. It also serves the built-in plugins when the binary is
// re-executed in plugin mode.
package cli
