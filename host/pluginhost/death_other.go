//go:build !linux

package pluginhost

import "os/exec"

// setDeathSignal has no kernel support here; plugin.Serve's parent watch ends
// the plugin when the host dies.
func setDeathSignal(*exec.Cmd) {}
