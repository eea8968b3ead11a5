//go:build !linux

package captured

import "io"

func writeBuffers(w io.Writer, bufs [][]byte) error { return writeEach(w, bufs) }
