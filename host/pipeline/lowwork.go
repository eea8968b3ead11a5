package pipeline

import (
	"context"

	"github.com/acptap/acptap/sdk"
)

// A recording's feeder relays the live batches capture hands it at the host's priority,
// on a goroutine that is not locked to a thread: waking it for each batch is one Go
// scheduler wake-up, where waking a goroutine locked to its own (lowered) thread costs four
// context switches (the runtime hands its P to the locked thread and back). What is heavy
// runs below capture, at the plugins' priority (priority.Target), on a goroutine of its own
// locked to a lowered thread: launching and restarting the plugin, and catching up from
// the wire log (reading and decoding it, sending the backlog). The two never run the
// feeder's code at the same time: the relay goroutine hands a function over and waits for
// it (low).

// startLow starts the feeder's lowered goroutine (a recording only: the offline modes keep
// the normal priority and run everything on the feeder's goroutine).
func (f *feeder) startLow() {
	if f.p.opts.Mode != sdk.ModeRecord {
		return
	}
	f.lowWork, f.lowDone = make(chan func()), make(chan struct{})
	work, done := f.lowWork, f.lowDone
	go func() {
		defer f.p.lowerFeeder()()
		for fn := range work {
			f.onLow = true
			fn()
			f.onLow = false
			done <- struct{}{}
		}
	}()
}

// stopLow ends the lowered goroutine (its thread ends with it).
func (f *feeder) stopLow() {
	if f.lowWork != nil {
		close(f.lowWork)
		f.lowWork = nil
	}
}

// low runs fn at the plugins' priority and waits for it: on the lowered goroutine, or
// right here when already on it or there is none.
func (f *feeder) low(fn func()) {
	if f.lowWork == nil || f.onLow {
		fn()
		return
	}
	f.lowWork <- fn
	<-f.lowDone
}

// lowCatchUp is catchUp at the plugins' priority.
func (f *feeder) lowCatchUp(ctx context.Context) (progressed bool) {
	f.low(func() { progressed = f.catchUp(ctx) })
	return progressed
}
