package pipeline

import (
	"sync"
	"time"

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

// lowerFeeder runs at the top of a live feeder's goroutine: the host's half
// of the mapping (launching the plugin, encoding and sending its batches,
// catching up from the wire log) runs at the plugins' priority
// (priority.Background), below capture.
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

// callIdle is how long a lowered call worker waits for the next plugin call
// before its goroutine (and thread) ends.
const callIdle = time.Second

// goCall runs fn, a plugin call (feeder.call), on a goroutine of its own as
// before, but in a live pipeline on a worker thread at the plugins' priority
// (priority.Target): encoding the batch for the plugin and decoding its
// outputs are the host's half of the mapping, below capture. An idle worker
// takes the call; when none is idle (the others are busy, or stuck in a
// stalled call the feeder abandoned) a new one starts. A worker ends after
// callIdle without a call.
func (p *Pipeline) goCall(fn func()) {
	if p.opts.Mode != sdk.ModeRecord {
		go fn()
		return
	}
	select {
	case p.calls() <- fn:
	default:
		go p.callWorker(fn)
	}
}

func (p *Pipeline) calls() chan func() {
	p.callsOnce.Do(func() { p.callQ = make(chan func()) })
	return p.callQ
}

func (p *Pipeline) callWorker(fn func()) {
	defer p.lowerThread(priority.Target, "plugin call")()
	idle := time.NewTimer(callIdle)
	defer idle.Stop()
	for {
		fn()
		idle.Reset(callIdle)
		select {
		case fn = <-p.calls():
		case <-idle.C:
			return
		}
	}
}

// callPool is the Pipeline's state for goCall.
type callPool struct {
	callsOnce sync.Once
	callQ     chan func()
}
