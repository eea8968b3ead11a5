//go:build !linux

package pipeline

import "time"

// kernelNap: elsewhere capture naps on its timer (newKernelNap returns nil).
type kernelNap struct{}

func newKernelNap() *kernelNap           { return nil }
func (k *kernelNap) sleep(time.Duration) {}
func (k *kernelNap) wake()               {}
func (k *kernelNap) close()              {}
