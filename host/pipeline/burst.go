package pipeline

import (
	"sync/atomic"
	"time"

	"github.com/acptap/acptap/host/captured"
)

// Capture's burst policy (see hold). On two CPUs a burst's time to the last byte is the sum
// of everybody's CPU during it: the copy path blocks on its pipes, and each time it does
// capture (nice 5) and the plugins catching up from the wire log (nice 10) take the CPU
// the editor and the agent need next; nice values only order who runs when several can.
// So while the tee queues faster than capture takes, capture holds off, and the burst's
// capture and mapping come after it, from the queue, which holds a quarter of its bytes
// (64 MiB by default) before the raised path takes over.
const (
	// holdBytes: capture holds off once the tee has queued this much more than the least
	// it held since the last hold (BacklogReads full reads, 1 MiB). Paced traffic never
	// gets there: at a line a millisecond or 50k updates a second capture drains the
	// queue at every coalescing window (tens of KiB at most).
	holdBytes = BacklogReads * captured.BufferSize
	// holdNap is how long capture sleeps between two looks at the queue while it holds
	// off. A burst goes on while the tee queued at least a full read (BufferSize) a
	// holdNap (32 MB/s) — a 64 MiB burst runs at 300-1,400 MB/s here, 90 MB/s at its
	// start while the plugins start up, paced traffic at 0.1-15 MB/s — so the hold ends
	// within about a nap of the burst's pause. (1 ms with the same rate: the copier,
	// descheduled for a millisecond beside the plugins' start-up, ended holds early;
	// capture then wrote what was queued, and the plugins mapped it during the burst.)
	holdNap = maxNap
	// maxHold bounds one hold, so that a stream fast enough to keep it on but too slow to
	// fill a quarter of the queue is not kept from the wire log and the plugins without
	// limit; capture then runs as before until it has caught up (less than holdBytes
	// queued) before it may hold off again.
	maxHold = 250 * time.Millisecond
)

// holds counts capture's holds (tests).
var holds atomic.Int64

// fill is how full the tee's queue is, the fuller of its bytes and its items.
func (c *captureLoop) fill() float64 {
	return max(c.queue.Use(), float64(len(c.items))/float64(max(cap(c.items), 1)))
}

// holdOff runs at the top of a lowered run's loop, the batch written and its chunks
// released: it holds capture off (hold) when the tee has queued holdBytes more than the
// least capture has seen queued since its last hold, the queue is under the raise
// threshold, and capture is neither hurried nor stopped nor catching up after a hold that
// ran to maxHold.
func (c *captureLoop) holdOff() {
	if c.queue == nil { // no chunk charged to the queue taken yet
		return
	}
	used := c.queue.Used()
	c.least = min(c.least, used)
	if c.catchUp {
		if c.catchUp = used >= holdBytes; c.catchUp {
			return
		}
	}
	if used-c.least < holdBytes || c.fill() >= raiseAbove || c.p.hurried() || c.p.stopped() {
		return
	}
	c.hold(used)
}

// hold keeps capture from taking anything — so nothing is written to the wire log either,
// and the plugins, which catch up from it in a burst, have nothing to map — until the burst
// pauses (less than a full read queued in a nap), the queue passes the raise threshold (the
// next batch raises capture, which then drains it beside the tee), Hurry or StopCapture, or
// maxHold. What the tee queues meanwhile is only in the queue: a SIGKILL of acptap during a
// hold loses it (up to a quarter of the queue, or maxHold of the stream), where capture
// without the hold lags a burst too, by less (it kept taking at nice 5), and so loses less.
// A clean exit loses nothing: Hurry ends the hold and the queue is written or handed over.
func (c *captureLoop) hold(used int64) {
	p := c.p
	holds.Add(1)
	p.fellBehind() // as the first batch taken behind would have (the standby finisher)
	if len(c.pend) > 0 {
		c.flush(true) // gathered lines for live plugins go now, not after the hold
	}
	start := time.Now()
	last, lastAt := used, start
	for {
		c.nap(time.Now().Add(holdNap))
		if p.stopped() || p.hurried() || c.fill() >= raiseAbove {
			return
		}
		now, u := time.Now(), c.queue.Used()
		if (u-last)*int64(holdNap) < captured.BufferSize*int64(now.Sub(lastAt)) {
			c.least = u // paused: capture drains, and holds again only if it falls behind anew
			return
		}
		if now.Sub(start) >= maxHold {
			c.catchUp = true
			return
		}
		last, lastAt = u, now
	}
}
