package cli

import (
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// finishGuard keeps a signal that arrives after the agent exited from
// killing acptap while it finishes the recording (flushing the plugins'
// last records): editors and clients such as acpx close the agent's stdin
// and send SIGTERM a moment later, when the agent is already gone and
// acptap is mapping the end of the session. Until the agent exits, the tee
// forwards these signals to the agent's group as before (both see them).
// A second signal after the agent exited ends acptap at once, with the
// agent's exit code.
type finishGuard struct {
	ch   chan os.Signal
	done chan struct{}
	code atomic.Int32
	gone atomic.Bool
}

func guardFinish() *finishGuard {
	g := &finishGuard{ch: make(chan os.Signal, 4), done: make(chan struct{})}
	signal.Notify(g.ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		seen := 0
		for {
			select {
			case <-g.ch:
				if !g.gone.Load() {
					continue // the tee forwards it to the agent
				}
				if seen++; seen > 1 {
					os.Exit(int(g.code.Load()))
				}
			case <-g.done:
				return
			}
		}
	}()
	return g
}

// agentExited says the agent is gone, with the code acptap will exit with.
func (g *finishGuard) agentExited(code int) {
	g.code.Store(int32(code))
	g.gone.Store(true)
}

// stop restores default signal handling.
func (g *finishGuard) stop() {
	signal.Stop(g.ch)
	close(g.done)
}
