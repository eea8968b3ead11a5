package tee

import (
	"os"
	"os/signal"
	"syscall"
)

// forwardedSignals are relayed to the agent when Config.Signals is set.
var forwardedSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// signalRelay catches forwardedSignals from the moment it is made (before the agent starts, so
// none is lost or kills us during startup) and relays them once the agent process is known.
type signalRelay struct {
	ch   chan os.Signal
	done chan struct{}
}

func newSignalRelay() *signalRelay {
	r := &signalRelay{ch: make(chan os.Signal, 8), done: make(chan struct{})}
	signal.Notify(r.ch, forwardedSignals...)
	return r
}

// start relays caught signals to the agent's process group until stop is called.
func (r *signalRelay) start(p *procGroup, log func(string, ...any)) {
	go func() {
		for {
			select {
			case s := <-r.ch:
				if err := p.signal(s); err != nil {
					log("cannot forward signal to agent", "signal", s.String(), "error", err)
				} else {
					log("forwarded signal to agent", "signal", s.String())
				}
			case <-r.done:
				return
			}
		}
	}()
}

// stop restores default signal handling and ends the relay; call it once.
func (r *signalRelay) stop() {
	signal.Stop(r.ch)
	close(r.done)
}
