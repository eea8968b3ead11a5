//go:build !linux

package tee

import "os"

// watchAgentStdin is not implemented here: the editor's stdin is closed only
// when a write to the agent fails.
func watchAgentStdin(*os.File, func()) (stop func()) { return func() {} }
