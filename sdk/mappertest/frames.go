package mappertest

import (
	"time"

	"github.com/acptap/acptap/internal/pluginwire"
	"github.com/acptap/acptap/sdk"
)

// Line is one wire line for building test frames.
type Line struct {
	Dir  sdk.Direction
	Data string
}

// C2A builds a client → agent line.
func C2A(s string) Line { return Line{Dir: sdk.C2A, Data: s} }

// A2C builds an agent → client line.
func A2C(s string) Line { return Line{Dir: sdk.A2C, Data: s} }

// Frames turns lines into frames exactly as the host's router does (see
// pluginwire.FrameBuilder): seqs from 1, receipt times one millisecond apart from
// base, batches split, responses joined to requests by (direction, id).
func Frames(base time.Time, lines ...Line) []sdk.Frame {
	b := pluginwire.NewFrameBuilder()
	var out []sdk.Frame
	for i, l := range lines {
		out = b.Line(out, uint64(i+1), l.Dir, base.Add(time.Duration(i)*time.Millisecond), []byte(l.Data))
	}
	return out
}
