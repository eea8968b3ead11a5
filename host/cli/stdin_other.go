//go:build !linux

package cli

import (
	"io"
	"os"
)

// isolateStdin is a no-op where descriptors cannot be moved portably;
// plugins built with plugin.Serve never read stdin.
func isolateStdin(in io.Reader) io.Reader { return in }

// releaseStdout closes the editor's stdout (the editor sees EOF).
func releaseStdout(f *os.File) { _ = f.Close() }
