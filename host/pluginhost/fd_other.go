//go:build !unix

package pluginhost

import "os"

// aboveStdio is needed only where plugins are exec'd by descriptor.
func aboveStdio(f *os.File) *os.File { return f }
