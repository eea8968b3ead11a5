//go:build !linux

package tee

import (
	"io"

	"github.com/acptap/acptap/host/captured"
)

// splicer is Linux only (splice_linux.go); elsewhere every chunk is read and written.
type splicer struct{}

func newSplicer(io.Writer, io.Reader) *splicer { return nil }

func (*splicer) ready() bool                    { return false }
func (*splicer) read(int)                       {}
func (*splicer) tee() int                       { return 0 }
func (*splicer) move(*captured.Chunk, int) bool { return false }
func (*splicer) fill([]byte) bool               { return false }
func (*splicer) take(int) ([]byte, bool)        { return nil, false }
func (*splicer) forward(int) error              { return nil }
func (*splicer) close()                         {}
