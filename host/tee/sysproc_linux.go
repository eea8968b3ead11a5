//go:build linux

package tee

import "syscall"

// sysProcAttr keeps the agent in our process group (so a terminal's Ctrl-C still reaches it)
// and asks the kernel to SIGKILL it if we die, even by SIGKILL.
//
// Caveat (golang/go#27505): Linux ties Pdeathsig to the thread that forked, not the process.
// Go threads only exit when a goroutine ends while locked with runtime.LockOSThread; acptap
// does not do that, so in practice the signal fires only when acptap itself dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
