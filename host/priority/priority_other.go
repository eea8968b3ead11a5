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
