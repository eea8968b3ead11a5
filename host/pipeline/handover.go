package pipeline

import (
	"context"
	"slices"

	"github.com/acptap/acptap/host/captured"
	"github.com/acptap/acptap/host/wire"
)

// Handover is where capture stopped (StopCapture): what a finisher needs to capture the
// rest of the tee's queue into the same wire log (Continue) exactly as this process would
// have.
type Handover struct {
	Lines     [2]captured.LineState // the splitter's lines in progress (c2a, a2c)
	WireBytes int64                 // the wire log's size, every entry up to Seq flushed
	Seq       uint64                // the last entry's seq
	Sessions  []string              // the sessions the wire log names (its session entries)
	Detect    DetectState           // the revision's detection so far
}

// DetectState is how far the revision's detection had got: the continuation writes the
// revision entry where this process would have, or not again.
type DetectState struct {
	Done       bool   `json:"done,omitempty"`
	ReqID      string `json:"reqId,omitempty"`
	ReqVersion int    `json:"reqVersion,omitempty"`
	Lines      int    `json:"lines,omitempty"`
}

// StopCapture stops capture at the next chunk boundary and leaves the rest of the queue
// unread (the caller takes it, e.g. to spool it for a finisher). The batch in hand is
// written and flushed; the wire log stays open (CloseWire). ok is false when capture had
// already ended: the queue was written to its end.
func (p *Pipeline) StopCapture() (h Handover, ok bool) {
	p.stopOnce.Do(func() { close(p.stop); p.wakeNaps() })
	<-p.captureDone
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.handover == nil || p.wire == nil {
		return Handover{}, false
	}
	size, err := p.wire.Size()
	if err != nil {
		p.log.Error("wire log not flushed; capture goes on in this process", "error", err)
		return Handover{}, false
	}
	h = *p.handover
	h.WireBytes, h.Seq, h.Sessions = size, p.wireSeq, slices.Clone(p.stats.Sessions)
	h.Detect = DetectState{Done: p.det.done, ReqID: p.det.reqID, ReqVersion: p.det.reqVersion, Lines: p.det.lines}
	return h, true
}

// BacklogReads: capture is behind the tee when this many of its reads wait on the queue.
const BacklogReads = 16

// behindBatches: a feeder still catching up from the wire log after this many batches in a
// row (one that attaches or restarts catches up in a batch or two) has fallen behind.
const behindBatches = 8

// countBehind counts the batches in a row dispatched while a feeder was catching up.
// Called with p.mu held.
func (p *Pipeline) countBehind(behind bool) {
	if !behind {
		p.behindFor = 0
		return
	}
	if p.behindFor++; p.behindFor >= behindBatches {
		p.fellBehind()
	}
}

// fellBehind calls Options.OnBehind the first time.
func (p *Pipeline) fellBehind() {
	if p.opts.OnBehind != nil {
		p.behindOnce.Do(func() { go p.opts.OnBehind() })
	}
}

// stopped says whether StopCapture asked capture to stop.
func (p *Pipeline) stopped() bool {
	select {
	case <-p.stop:
		return true
	default:
		return false
	}
}

// Continue captures items into a wire log another process handed over (StopCapture's
// h): it appends after h.Seq, splitting from h's lines in progress, and knows h's
// sessions. Nothing is mapped (no plugin attaches): the finisher maps the whole log
// afterwards. Wait waits for the end and closes the log.
func (p *Pipeline) Continue(ctx context.Context, h Handover, items <-chan captured.Item) error {
	w, err := wire.Continue(p.wirePath, h.WireBytes, h.Seq)
	if err != nil {
		return err
	}
	p.wire, p.wireSeq = w, h.Seq
	for _, id := range h.Sessions {
		p.tracker.known[id] = true
	}
	p.stats.Sessions = slices.Clone(h.Sessions)
	p.captureOnly = true
	if h.Detect.Done {
		p.det.done = true // its entry is written
	} else {
		p.det.reqID, p.det.reqVersion, p.det.lines = h.Detect.ReqID, h.Detect.ReqVersion, h.Detect.Lines
	}
	p.resume = &h.Lines
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.capture(ctx, items)
	}()
	return nil
}

// stopCapture ends a capture StopCapture stopped: what the splitter holds is kept for the
// hand-over (copied, before the chunks it aliases are released).
func (p *Pipeline) stopCapture(split *captured.Splitter) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.handover = &Handover{Lines: split.State()}
	if p.wire != nil {
		if err := p.wire.Flush(); err != nil {
			p.log.Error("flush wire log", "error", err)
		}
	}
}
