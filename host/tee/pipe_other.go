//go:build !linux

package tee

import (
	"io"
	"os"
)

// readBlockingPipe is os.Pipe where blocking reads are not set up (see pipe_linux.go).
func readBlockingPipe() (r, w *os.File, err error) { return os.Pipe() }

// agentStdinPipe is os.Pipe where pipe capacities are not raised (see pipe_linux.go).
func agentStdinPipe() (r, w *os.File, err error) { return os.Pipe() }

// raiseEditorPipes leaves the editor's pipes as they are (see pipe_linux.go).
func raiseEditorPipes(io.Reader, io.Writer) {}
