//go:build !linux

package cli

import "io"

// isolateStdin is a no-op where descriptors cannot be moved portably;
// plugins built with plugin.Serve never read stdin.
func isolateStdin(in io.Reader) io.Reader { return in }
