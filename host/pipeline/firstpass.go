package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/acptap/acptap/host/wire"
)

// firstPassInWindow: a Rebuild without a scan (Options.Scan) does its first
// pass in the shared window's reader, beside the mapping, instead of
// reading the whole log before the feeders start and then once more in the
// window. The finisher's mapping after an exit and the rebuild of a log
// that was not planned with a scan decode it once and start at once.
// Off: the first pass reads the log to its end first (tests compare).
var firstPassInWindow = true

// rebuildInWindow is Rebuild's first pass in the window's reader. The
// plugins are chosen from the first frames (the revision detector decides
// within maxDetectLines of them, or at the end of the log), then the
// window reads the log once: each entry goes through the first pass —
// counted, its problems reported, its sessions resolved — before it is in
// a block a feeder can take, so that a feeder maps an entry only once the
// sessions it stands for or announces are known, as after a whole first
// pass. The target of the feeders is unknown (the largest seq) until the
// reader has reached the end; then it is the log's last seq, and
// captureDone is closed, as attachRebuild closes it.
func (p *Pipeline) rebuildInWindow(ctx context.Context) error {
	r, err := wire.Open(p.wirePath)
	if err != nil {
		return err
	}
	tr := wire.NewTolerant(r, nil) // the window's reader reports the problems
	for !p.det.done {
		e, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			tr.Close()
			return fmt.Errorf("read %s: %w", p.wirePath, err)
		}
		if e.Type == wire.TypeFrame {
			p.det.observe(e.Dir, e.Line)
		}
	}
	tr.Close()
	p.det.end()

	p.inWindow = true
	p.wireSeq = math.MaxUint64 // until the first pass has reached the end
	w := newWindow(p.wirePath, 0, p.batchFrames)
	w.problem = p.opts.OnReadProblem
	w.first = func(e wire.Entry) {
		p.count(e)
		if p.opts.ResolveSessions {
			p.resolve(e)
		}
	}
	w.last = func(seq uint64, err error) {
		p.mu.Lock()
		p.wireSeq = seq
		p.mu.Unlock()
		if err != nil {
			p.firstErr = fmt.Errorf("read %s: %w", p.wirePath, err)
		}
	}
	// The reader is started below, once attach is done; a feeder that takes a block before
	// then waits for it rather than starting a second reader over the same window (which
	// counted every entry of the first pass twice, and raced on the window's blocks).
	w.started = true
	p.mu.Lock()
	p.win = w
	p.attach(ctx) // every feeder joins the window here, before its reader starts
	p.mu.Unlock()
	p.wg.Add(1)
	w.mu.Lock()
	w.closed = len(w.cursors) == 0 // no plugin: the pass alone, keeping no block
	w.startLocked(ctx, func() {
		defer p.wg.Done()
		w.read()
		close(p.captureDone)
	})
	w.mu.Unlock()
	return nil
}
