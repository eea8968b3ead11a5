//go:build !linux

package tee

import "syscall"

// sysProcAttr is the default elsewhere: no portable parent-death signal exists, so the agent
// may outlive an acptap killed by SIGKILL (it still sees EOF on its stdin).
func sysProcAttr() *syscall.SysProcAttr { return nil }
