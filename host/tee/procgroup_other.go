//go:build !linux

package tee

import (
	"io"
	"os"
	"os/exec"
	"syscall"

	"github.com/hashicorp/go-hclog"
)

// sysProcAttr is the default elsewhere: no portable parent-death signal exists, so the agent
// may outlive an acptap killed by SIGKILL (it still sees EOF on its stdin), and it stays in
// our process group (a terminal's Ctrl-C reaches it directly).
func sysProcAttr() *syscall.SysProcAttr { return nil }

// procGroup is the agent process alone here.
type procGroup struct{ p *os.Process }

func startGroup(cmd *exec.Cmd, _ func(int) *exec.Cmd, _ hclog.Logger) *procGroup {
	return &procGroup{p: cmd.Process}
}

func cancelAgent(cmd *exec.Cmd) func() error { return func() error { return cmd.Process.Kill() } }

func (g *procGroup) signal(s os.Signal) error { return g.p.Signal(s) }
func (g *procGroup) terminate()               {}
func (g *procGroup) end()                     {}

// Watchdog does nothing where the agent has no group of its own.
func Watchdog(int, io.Reader) int { return 0 }
