package pluginhost

import (
	"os/exec"
	"syscall"
)

// setDeathSignal asks the kernel to SIGKILL the plugin when the host dies;
// plugin.Serve's parent watch is the second line of defence.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
