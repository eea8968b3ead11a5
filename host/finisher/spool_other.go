//go:build !linux

package finisher

import (
	"errors"
	"os"
)

// NewSpool is Linux-only (a memfd): elsewhere record writes its capture to the wire log
// before it exits.
func NewSpool() (*os.File, error) { return nil, errors.New("spool: needs memfd (Linux)") }
