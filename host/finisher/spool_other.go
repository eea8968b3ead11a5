//go:build !linux

package finisher

import (
	"errors"
	"os"
)

// NewSpool is Linux-only (a memfd): elsewhere record writes its capture to the wire log
// before it exits.
func NewSpool() (*os.File, error) { return nil, errors.New("spool: needs memfd (Linux)") }

// EarlyAlive says whether a finisher SpawnEarly started for m may still wait.
func (m *Marker) EarlyAlive() bool { return len(m.early) > 0 }
