package pipeline

import (
	"github.com/acptap/acptap/host/priority"
	"github.com/acptap/acptap/sdk"
)

// lowerCapture runs at the top of a live capture's goroutine, which then
// stays on an OS thread of its own below the tee's (priority.Capture): in a
// burst the copy path forwards first and capture catches up from the tee's
// queue. The goroutine calls the function it returns as it ends. Offline
// modes (rebuild, convert) keep the normal priority.
func (p *Pipeline) lowerCapture() (release func()) {
	return p.lowerThread(priority.CaptureTarget, "capture")
}

// lowerFeeder runs at the top of a live feeder's lowered goroutine
// (lowwork.go): the heavy half of the host's mapping (launching the plugin,
// catching up from the wire log) runs at the plugins' priority
// (priority.Background), below capture; live batches are relayed unlowered.
func (p *Pipeline) lowerFeeder() (release func()) {
	return p.lowerThread(priority.Target, "feeder")
}

func (p *Pipeline) lowerThread(target func(int) int, what string) func() {
	if p.opts.Mode != sdk.ModeRecord {
		return func() {}
	}
	release, err := priority.LowerThread(target)
	if err != nil {
		p.log.Debug(what+" keeps the normal priority", "error", err)
	}
	return release
}
