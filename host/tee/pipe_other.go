//go:build !linux

package tee

import "os"

// readBlockingPipe is os.Pipe where blocking reads are not set up (see pipe_linux.go).
func readBlockingPipe() (r, w *os.File, err error) { return os.Pipe() }
