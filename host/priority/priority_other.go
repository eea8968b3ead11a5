//go:build !linux

package priority

import "errors"

// Supported says whether Start lowers the priority on this system.
const Supported = false

// Start runs start; on this system the started process keeps the normal
// priority, and the first value says so.
func Start(start func() error, _ <-chan struct{}) (reniceErr, err error) {
	return errors.New("lowering a child's priority is implemented on Linux only"), start()
}

// LowerSelf is not implemented here.
func LowerSelf() error {
	return errors.New("lowering the priority is implemented on Linux only")
}

// LowerThread is not implemented here: the calling goroutine is not locked
// and keeps the normal priority.
func LowerThread(func(own int) int) (release func(), err error) {
	return func() {}, errors.New("lowering a thread's priority is implemented on Linux only")
}

// ShortenSlices is Linux only (a scheduler slice per thread).
func ShortenSlices() error {
	return errors.New("scheduler slices are implemented on Linux only")
}
