package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/internal/pluginwire"
	"github.com/acptap/acptap/sdk"
)

// Plugin is one started plugin as the pipeline sees it.
type Plugin struct {
	Name   string
	Info   sdk.Info
	Mapper sdk.Mapper
	// Kill stops the plugin process (nil for in-process mappers).
	Kill func()
	// Release, when set, hands a plugin that mapped the connection to the
	// end back to whoever launched it, for the next connection (a rebuild
	// keeps its plugins for the whole run); Kill is still used on failure.
	Release func()
}

// Launcher starts (or restarts) the plugin with the given name.
type Launcher func(ctx context.Context, name string) (*Plugin, error)

// entryReader reads wire log entries: a wire.Reader live, a wire.Tolerant
// in a rebuild (which reads past bad lines as the rebuild's first pass did).
type entryReader interface {
	Next() (wire.Entry, error)
	Close() error
}

// OfflineBatchFrames is the least frames a batch holds in the offline
// modes, where the wire log or the input is there in full: rebuild and
// convert raise Options.BatchFrames to it (a recording's batches, which
// capture cuts at what is ready, keep tee.batch_frames). Each batch costs
// the host and every plugin a round of wake-ups, a request and a response
// whatever its size: a 70 MB rebuild took ~18 % less CPU in the host and
// ~12 % less in the aep plugin at 1024 than at 256, and the same in acpv2.
// The shared window bounds the lines it holds by bytes as well
// (windowMaxBytes), so a batch of long lines holds no more memory.
const OfflineBatchFrames = 1024

// shareFrames off: every feeder builds its own frames of the window's
// blocks (tests compare).
var shareFrames = true

// leaveWindowAfter, when set, makes a feeder leave the shared window after
// that many blocks and map the rest with a reader of its own (tests).
var leaveWindowAfter = 0

// liveFromStart off: every new feeder starts behind, catching up from the
// wire log (tests compare).
var liveFromStart = true

// firstLive counts the feeders whose first batch came live, not from the wire log (tests).
var firstLive atomic.Int64

// batchesMade counts the batch arrays capture made (tests).
var batchesMade atomic.Int64

// errStalled means a plugin did not answer a batch in time.
var errStalled = errors.New("plugin did not answer in time")

// feeder feeds one plugin. It takes live batches from capture while it
// keeps up; when its queue is full, capture marks it behind and stops
// sending, and the feeder catches up from the wire log. Either way the
// plugin sees every frame, in order, exactly once per instance.
type feeder struct {
	p       *Pipeline
	name    string
	primary bool
	log     hclog.Logger

	live   chan []wire.Entry
	behind atomic.Bool

	plug *Plugin
	sess sdk.Session
	fb   *pluginwire.FrameBuilder
	// winFrames: the window's reader builds the plugin's frames (a feeder
	// that maps the shared window from its start: the window's builder has
	// seen what fb would have, and fb nothing).
	winFrames bool
	reader    entryReader
	lastFed   uint64 // the last wire seq this instance has mapped

	instOut  int // outputs the current instance produced
	written  int // outputs given to the sink (across restarts)
	restarts int
	dead     atomic.Bool // gave up: capture-only from here on (read by capture)
	finished bool        // Finish answered: the plugin can be released

	frames []sdk.Frame
	// In a rebuild: the feeder's cursor in the shared decoded wire log
	// (window.go); nil once it left it (a restarted plugin is re-fed by a
	// reader of its own).
	cur *windowCursor
	blk *windowBlock // the window's block being submitted
	// Pipelined batches (offline modes, catching up): the last seq of each
	// batch sent and not yet answered, oldest first.
	flights []uint64
	done    chan struct{}
	mapped  chan struct{} // closed when the feeder has delivered its last output (before the plugin is stopped)

	// A recording's low-priority work (lowwork.go): nil in the offline modes.
	lowWork chan func()
	lowDone chan struct{}
	named   []namedAt // build's sessions of the batch (sessionsOf)
	fed     bool      // a batch was submitted (firstLive)
	onLow   bool      // the feeder's code runs on the lowered goroutine now
}

func newFeeder(p *Pipeline, name string, primary bool, depth int) *feeder {
	f := &feeder{p: p, name: name, primary: primary, log: p.log.Named(name),
		live: make(chan []wire.Entry, depth), done: make(chan struct{}), mapped: make(chan struct{})}
	// A new feeder starts by catching up from seq 1 — but a conversion's
	// feeder attached before capture has written anything (its revision is
	// forced: Start attaches at once): it takes live batches from the first,
	// its queue holding them while its plugin starts (a conversion's queue
	// can hold all its kept frames: logimport). Marked behind, it would see
	// capture, which reads the input far faster than the plugin maps, run
	// to the end before it looks, and decode the whole wire log back.
	f.behind.Store(!(liveFromStart && p.opts.Mode == sdk.ModeConvert && p.wireSeq == 0))
	if p.rebuilding && shareWindow {
		// attach makes every feeder of a rebuild here, under p.mu, before
		// any of them reads (see window.join).
		if p.win == nil {
			p.win = newWindow(p.wirePath, p.wireSeq, p.batchFrames)
		}
		f.cur = p.win.join()
	}
	return f
}

// run feeds the plugin until capture is done, then finishes the session.
func (f *feeder) run(ctx context.Context) {
	defer f.stopLow()
	f.startLow()
	defer close(f.done)
	defer f.leave()
	defer close(f.mapped)
	f.low(func() {
		if err := f.start(ctx); err != nil {
			f.giveUp(err)
		}
	})
	for {
		// A cancelled run stops here: catching up after a failed restart
		// (which a cancelled context makes fail at once) would otherwise
		// reopen the wire log in a loop without ever reaching the select.
		if ctx.Err() != nil {
			return
		}
		select {
		case b := <-f.live:
			f.liveBatch(ctx, b)
			continue
		default:
		}
		if f.behind.Load() {
			if f.lowCatchUp(ctx) {
				continue
			}
		}
		// Nothing queued: what is in flight is answered before waiting.
		f.drain(ctx)
		select {
		case b := <-f.live:
			f.liveBatch(ctx, b)
		case <-f.p.captureDone:
			if len(f.live) > 0 {
				continue
			}
			if f.behind.Load() && f.lowCatchUp(ctx) {
				continue
			}
			f.finish(ctx)
			return
		case <-ctx.Done():
			return
		}
	}
}

func (f *feeder) start(ctx context.Context) error {
	plug, err := f.p.launch(ctx, f.name)
	if err != nil {
		return fmt.Errorf("start plugin %s: %w", f.name, err)
	}
	f.plug = plug
	req := f.p.startRequest(f.name)
	// Start only opens the Map stream (bound to ctx, so no deadline here); a
	// plugin that hangs is caught by the first Map or Finish, which run
	// under the stall deadline.
	sess, err := plug.Mapper.Start(ctx, req)
	if err != nil {
		return fmt.Errorf("start plugin %s session: %w", f.name, err)
	}
	f.sess, f.fb, f.lastFed, f.instOut = sess, pluginwire.NewFrameBuilder(), 0, 0
	f.winFrames = f.cur != nil && f.cur.next == 0 && shareFrames

	f.flights = nil
	if f.reader != nil {
		f.reader.Close()
		f.reader = nil
	}
	f.log.Debug("plugin attached", "version", plug.Info.Version, "inputs", plug.Info.Inputs)
	return nil
}

// liveBatch maps a batch capture dispatched (submit: pipelined when the
// plugin's session can, live as offline; the run loop collects what is in
// flight before it waits for the next batch, so no output waits on one).
func (f *feeder) liveBatch(ctx context.Context, b []wire.Entry) {
	if !f.fed {
		// (Once a feeder: a restarted instance starts again at seq 0, and its
		// first batch may come either way.)
		f.fed = true
		firstLive.Add(1)
	}
	if f.lowWork != nil && !f.onLow && f.namesSessions(b) {
		// A session frame reads the session's prior stream from the store
		// (sessionInfo), which may be long, or waits for another process's
		// lock: at the plugins' priority. Rare: the wake is paid once a session.
		f.low(func() { f.liveBatch(ctx, b) })
		return
	}
	if f.p.offline() || pipelineLive {
		f.submit(ctx, b)
		return
	}
	f.process(ctx, b)
}

// writesASR says whether the plugin writes ASR streams (its Info lists
// the "asr" output).
func (f *feeder) writesASR() bool {
	return f.plug != nil && f.plug.Info.Writes(sdk.FormatASR)
}

// catchUp maps what the wire log holds beyond lastFed. It returns true
// when it made progress, false when it is caught up (and live again).
func (f *feeder) catchUp(ctx context.Context) bool {
	f.drain(ctx) // live batches in flight: lastFed is what the plugin answered
	target, caughtUp := f.p.wireTarget(f)
	if caughtUp {
		return false
	}
	if f.cur != nil && !f.dead.Load() {
		return f.catchUpShared(ctx, target)
	}
	if f.p.inWindow {
		// Out of the window (given up, or restarted and re-fed from seq 1):
		// the log is read on its own once the first pass has reached its end
		// (firstpass.go), so that its sessions and its last seq are known.
		f.leaveWindow()
		select {
		case <-f.p.captureDone:
		case <-ctx.Done():
			return true
		}
		if target, caughtUp = f.p.wireTarget(f); caughtUp {
			return false
		}
	}
	if f.dead.Load() {
		f.lastFed = target
		f.leaveWindow()
		return true
	}
	defer f.drain(ctx)
	if f.reader == nil {
		r, err := wire.Open(f.p.wirePath)
		if err != nil {
			f.giveUp(fmt.Errorf("catch up from wire log: %w", err))
			return true
		}
		f.reader = r
		if f.p.rebuilding {
			f.reader = wire.NewTolerant(r, nil)
		}
	}
	// One batch slice for all: submit is done with a batch's entries when it
	// returns (a pipelined batch's frames are sent by then).
	batch := make([]wire.Entry, 0, f.p.batchFrames)
	for f.lastFedSent() < target && !f.dead.Load() {
		if f.reader == nil {
			// The plugin failed and was restarted (which closed the
			// reader): catch up again, from the new instance's lastFed.
			return true
		}
		batch = batch[:0]
		sent := f.lastFedSent()
		seq := sent
		for seq < target && len(batch) < f.p.batchFrames {
			e, err := f.reader.Next()
			if err != nil {
				f.drain(ctx)
				f.giveUp(fmt.Errorf("read wire log at seq %d: %w", seq+1, err))
				return true
			}
			if e.Seq <= sent {
				continue
			}
			batch = append(batch, e)
			seq = e.Seq
		}
		f.submit(ctx, batch)
	}
	return true
}

// offline says whether the connection is mapped from a log, with no tee
// to keep up with (rebuild, the finisher, convert): batches read from the
// wire log are pipelined there.
func (p *Pipeline) offline() bool { return p.rebuilding || p.opts.Mode == sdk.ModeConvert }

// catchUpShared maps the wire log from the shared window (a rebuild).
func (f *feeder) catchUpShared(ctx context.Context, target uint64) bool {
	defer f.drain(ctx)
	for f.lastFedSent() < target && !f.dead.Load() && f.cur != nil {
		blk, err := f.cur.take(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return true
			}
			if f.p.inWindow && errors.Is(err, io.EOF) {
				// The first pass's end: the target is the log's last seq now.
				f.leaveWindow()
				return true
			}
			f.drain(ctx)
			f.giveUp(err)
			return true
		}
		f.blk = blk
		f.submit(ctx, blk.entries)
		f.blk = nil
		if leaveWindowAfter > 0 && f.cur != nil && f.cur.next >= leaveWindowAfter {
			f.leaveWindow()
		}
	}
	if f.cur != nil && f.lastFedSent() >= target {
		f.leaveWindow()
	}
	return true
}

// leaveWindow takes the feeder's cursor out of the shared window.
func (f *feeder) leaveWindow() {
	if f.cur != nil {
		f.cur.leave()
		f.cur = nil
	}
}

// pipelined is the Session side of pipelined batches (pluginwire's remote
// sessions): Submit sends a batch, Collect returns the outputs of the
// oldest one sent.
type pipelined interface {
	Submit(ctx context.Context, frames []sdk.Frame) error
	Collect(ctx context.Context) ([]sdk.Output, error)
}

// pipelineDepth is how many batches a feeder has sent and not had
// answered at most: two, so that the plugin has the next batch as soon as
// it has answered one, and maps it while the host delivers the outputs and
// builds the batch after.
const pipelineDepth = 2

// pipelineBatches off: every batch is a synchronous Map (tests compare).
var pipelineBatches = true

// pipelineLive: a recording's feeders pipeline their batches too (live and
// catching up), as the offline modes do. The plugin sees the same frames
// in the same batches; outputs are delivered in batch order; a batch with a
// session frame waits for every output before it, and the run loop
// collects every batch in flight before it waits for capture, so an output
// is never held back by a batch that is not coming.
//
// Off: the `make test` failures that turned it off (internal/aepe2e's relay
// tests: acptap record still running 5 s after the session, under load) were
// not its doing: the tee duplicated the agent's stdin without close-on-exec in
// the same call, and the watchdog forked in between kept the agent's stdin open
// (host/tee stdin_gone_linux.go, TestAgentStdinWatchLeaksNoDescriptor). On again
// it measured no better at the record level (the round trip's CPU and context
// switches, the burst's CPU: docs/benchmarks-history.md, sixth round, feeders), so a
// recording keeps one batch at a time; TestLivePipelinedSameOutputs and
// TestFeederRelaysLiveUnlowered run both ways.
var pipelineLive = false

// lastFedSent is the last seq sent to the plugin (answered or not).
func (f *feeder) lastFedSent() uint64 {
	if n := len(f.flights); n > 0 {
		return f.flights[n-1]
	}
	return f.lastFed
}

// submit maps a batch: pipelined when the plugin's session can (and, in a
// recording, pipelineLive), synchronously (process) otherwise. Outputs are
// delivered in batch order either way.
func (f *feeder) submit(ctx context.Context, batch []wire.Entry) {
	f.fed = true
	ps, ok := f.sess.(pipelined)
	if !ok || !pipelineBatches || !(f.p.offline() || pipelineLive) || f.dead.Load() {
		f.drain(ctx)
		f.process(ctx, batch)
		return
	}
	names := f.namesSessions(batch)
	if names {
		// A session frame reads the store's prior stream (sessionInfo):
		// only once every output before it was delivered, as unpipelined.
		if !f.drain(ctx) {
			return
		}
	}
	after := f.lastFedSent()
	if bs, ok := ps.(batchSubmitter); ok && !names && f.winFrames && f.blk != nil && len(f.blk.frames) > 0 &&
		len(batch) > 0 && batch[0].Seq == after+1 {
		// The window's block as it is (no session frame to add): the same
		// encoded request as every other plugin's.
		b := f.blk.shared()
		if _, err := f.call(ctx, func() ([]sdk.Output, error) { return nil, bs.SubmitBatch(ctx, b) }); err != nil {
			f.fail(ctx, err)
			return
		}
		f.flights = append(f.flights, batch[len(batch)-1].Seq)
		f.collectTo(ctx, pipelineDepth-1)
		return
	}
	last, ok := f.build(batch, after)
	if !ok {
		// Not the next frames (cannot happen when catching up): map it
		// the plain way, which says so.
		if f.drain(ctx) {
			f.process(ctx, batch)
		}
		return
	}
	if len(f.frames) == 0 {
		if f.drain(ctx) {
			f.lastFed = max(f.lastFed, last)
		}
		return
	}
	frames := f.frames
	if _, err := f.call(ctx, func() ([]sdk.Output, error) { return nil, ps.Submit(ctx, frames) }); err != nil {
		f.fail(ctx, err)
		return
	}
	f.flights = append(f.flights, last)
	f.collectTo(ctx, pipelineDepth-1)
}

// batchSubmitter is a pipelined session that sends a pluginwire.Batch
// encoded once for every session (pluginwire's remote sessions).
type batchSubmitter interface {
	SubmitBatch(ctx context.Context, b *pluginwire.Batch) error
}

// collectTo delivers the outputs of the oldest batches in flight until n
// at most are; false when the plugin failed.
func (f *feeder) collectTo(ctx context.Context, n int) bool {
	for len(f.flights) > n {
		if !f.collect(ctx) {
			return false
		}
	}
	return true
}

// collect delivers the outputs of the oldest batch in flight; false when
// the plugin failed (and was restarted, or given up).
func (f *feeder) collect(ctx context.Context) bool {
	ps := f.sess.(pipelined)
	outs, err := f.call(ctx, func() ([]sdk.Output, error) { return ps.Collect(ctx) })
	if err != nil {
		f.flights = nil
		f.fail(ctx, err)
		return false
	}
	f.lastFed = f.flights[0]
	f.flights = f.flights[1:]
	f.deliver(outs)
	return true
}

// drain delivers the outputs of every batch in flight; false when the
// plugin failed.
func (f *feeder) drain(ctx context.Context) bool { return f.collectTo(ctx, 0) }

// namesSessions says whether the batch has a session frame to build.
func (f *feeder) namesSessions(batch []wire.Entry) bool {
	f.p.sessMu.RLock()
	defer f.p.sessMu.RUnlock()
	for i := range batch {
		if batch[i].Type == wire.TypeSession || len(f.p.injected[batch[i].Seq]) > 0 {
			return true
		}
	}
	return false
}

// process maps a batch of wire entries and writes the outputs.
func (f *feeder) process(ctx context.Context, batch []wire.Entry) {
	if f.dead.Load() || len(batch) == 0 {
		if n := len(batch); n > 0 {
			f.lastFed = batch[n-1].Seq
		}
		return
	}
	last, ok := f.build(batch, f.lastFed)
	if !ok {
		// A live batch queued before a restart: this instance has not
		// seen the frames before it. The wire log holds them all, so
		// catch up from there instead.
		f.behind.Store(true)
		return
	}
	if len(f.frames) == 0 {
		// Every entry was mapped already (a feeder that caught up from the wire log
		// past what capture had not yet dispatched): no call.
		f.lastFed = last
		return
	}
	// The call may be abandoned by the watchdog and go on running against
	// a dead plugin: it gets its own session and frames, never the fields.
	sess, frames := f.sess, f.frames
	outs, err := f.call(ctx, func() ([]sdk.Output, error) { return sess.Map(ctx, frames) })
	if err != nil {
		f.fail(ctx, err)
		return
	}
	f.lastFed = last
	f.deliver(outs)
}

// build makes f.frames of the batch's entries after seq after; ok false
// when the batch does not go on from there.
func (f *feeder) build(batch []wire.Entry, after uint64) (last uint64, ok bool) {
	for _, e := range batch {
		if e.Seq <= after {
			continue
		}
		if e.Seq != after+1 {
			return 0, false
		}
		break
	}
	blk := f.blk // the window's frames (its entries are batch)
	if !f.winFrames {
		blk = nil
	} else if blk == nil {
		f.fb, f.winFrames = f.replayBuilder(after), false
	}
	f.frames = f.frames[:0]
	f.sessionsOf(batch, after)
	k := 0 // the next of f.named
	for i, e := range batch {
		if e.Seq <= after {
			continue
		}
		var named []wire.Session
		if k < len(f.named) && f.named[k].i == i {
			named = f.named[k].sessions
			k++
		}
		switch e.Type {
		case wire.TypeGap:
			if blk != nil {
				f.frames = append(f.frames, blk.entryFrames(i)...)
				break
			}
			f.frames = f.fb.Gap(f.frames, e.Seq, e.Dir, e.At, e.Gap)
		case wire.TypeSession:
			s := e.Session
			if len(named) > 0 {
				s = named[0]
			}
			f.frames = f.fb.Session(f.frames, e.Seq, e.Dir, e.At, f.p.sessionInfo(s, f))
		default:
			for _, s := range named {
				f.frames = f.fb.Session(f.frames, e.Seq, e.Dir, e.At, f.p.sessionInfo(s, f))
			}
			if blk != nil {
				f.frames = append(f.frames, blk.entryFrames(i)...)
				break
			}
			f.frames = f.fb.Line(f.frames, e.Seq, e.Dir, e.At, e.Line)
		}
	}
	return batch[len(batch)-1].Seq, true
}

// replayBuilder is the FrameBuilder of a feeder that mapped the window's
// frames through seq and now builds its own (it left the window and maps
// on, as no rebuild does today): a new one given the log's lines through
// seq, as the window's reader gave its own.
func (f *feeder) replayBuilder(seq uint64) *pluginwire.FrameBuilder {
	fb := pluginwire.NewFrameBuilder()
	r, err := wire.Open(f.p.wirePath)
	if err != nil {
		return fb // (the catch-up that reads on from here fails on it too)
	}
	var rd entryReader = r
	if f.p.rebuilding {
		rd = wire.NewTolerant(r, nil)
	}
	defer rd.Close()
	var frames []sdk.Frame
	for last := uint64(0); ; {
		e, err := rd.Next()
		if err != nil || e.Seq > seq {
			return fb
		}
		if e.Seq <= last {
			continue
		}
		last = e.Seq
		if e.Type != wire.TypeGap && e.Type != wire.TypeSession {
			frames = fb.Line(frames[:0], e.Seq, e.Dir, e.At, e.Line)
		}
	}
}

// namedAt is an entry of a batch (by index) and the sessions it stands
// for (a session entry, as resolved) or announces (a frame that names
// sessions first).
type namedAt struct {
	i        int
	sessions []wire.Session
}

// sessionsOf sets f.named to the batch's entries after seq after that
// stand for or announce sessions, in order. The maps are read under
// sessMu once a batch (a first pass in the window writes them meanwhile,
// firstpass.go); sessionInfo, which may wait for another process, is
// called after, without it.
func (f *feeder) sessionsOf(batch []wire.Entry, after uint64) {
	f.named = f.named[:0]
	f.p.sessMu.RLock()
	defer f.p.sessMu.RUnlock()
	if f.p.resolved == nil {
		return
	}
	for i := range batch {
		e := &batch[i]
		if e.Seq <= after {
			continue
		}
		if e.Type == wire.TypeSession {
			if r, ok := f.p.resolved[e.Seq]; ok {
				f.named = append(f.named, namedAt{i: i, sessions: []wire.Session{r}})
			}
		} else if e.Type != wire.TypeGap {
			if inj := f.p.injected[e.Seq]; len(inj) > 0 {
				f.named = append(f.named, namedAt{i: i, sessions: inj})
			}
		}
	}
}

// call runs one plugin call under the stall watchdog.
func (f *feeder) call(ctx context.Context, fn func() ([]sdk.Output, error)) ([]sdk.Output, error) {
	type result struct {
		outs []sdk.Output
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		o, err := fn()
		ch <- result{o, err}
	}()
	var timeout <-chan time.Time
	if f.p.stallTimeout > 0 {
		t := time.NewTimer(f.p.stallTimeout)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case r := <-ch:
		return r.outs, r.err
	case <-timeout:
		f.kill()
		f.frames = nil // the abandoned call may still read the old batch
		return nil, fmt.Errorf("%w (%s)", errStalled, f.p.stallTimeout)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// deliver hands outputs to the sink, skipping those an earlier instance
// already delivered (a restarted plugin is re-fed from seq 1).
func (f *feeder) deliver(outs []sdk.Output) {
	for i := range outs {
		f.instOut++
		if f.instOut <= f.written {
			continue
		}
		f.written++
		f.p.sink.Output(f.name, f.primary, outs[i])
	}
}

// fail restarts the plugin and re-feeds it, or gives up after the bound.
func (f *feeder) fail(ctx context.Context, cause error) {
	f.kill()
	if ctx.Err() != nil {
		return
	}
	f.p.countRestart()
	if f.restarts >= f.p.maxRestarts {
		f.giveUp(fmt.Errorf("plugin %s failed %d times, last: %w", f.name, f.restarts+1, cause))
		return
	}
	f.restarts++
	f.log.Warn("plugin failed; restarting and re-feeding from the wire log", "restart", f.restarts, "error", cause)
	var err error
	f.low(func() { err = f.start(ctx) })
	if err != nil {
		f.fail(ctx, err)
		return
	}
	f.behind.Store(true)
}

// giveUp makes the feeder capture-only and declares the gap.
func (f *feeder) giveUp(err error) {
	if f.dead.Load() {
		return
	}
	f.dead.Store(true)
	f.kill()
	f.log.Error("plugin disabled for the rest of this connection; capture continues", "error", err, "mapped_through_seq", f.lastFed)
	f.p.sink.Gap(f.name, f.primary, f.lastFed, err.Error())
}

func (f *feeder) finish(ctx context.Context) {
	if !f.drain(ctx) {
		for f.behind.Load() && f.lowCatchUp(ctx) {
		}
	}
	if f.dead.Load() || f.sess == nil {
		return
	}
	sess, reason := f.sess, f.p.finishReason
	outs, err := f.call(ctx, func() ([]sdk.Output, error) { return sess.Finish(ctx, reason) })
	if err != nil {
		// Finish failed: restart, re-feed everything and finish again.
		f.fail(ctx, err)
		if !f.dead.Load() {
			for f.behind.Load() && f.lowCatchUp(ctx) {
			}
			f.finish(ctx)
		}
		return
	}
	f.finished = true
	f.deliver(outs)
}

// leave ends the feeder's use of its plugin: released when it mapped to the
// end and its launcher takes it back, killed otherwise.
func (f *feeder) leave() {
	f.leaveWindow()
	if f.finished && !f.dead.Load() && f.plug != nil && f.plug.Release != nil {
		if f.reader != nil {
			f.reader.Close()
			f.reader = nil
		}
		f.plug.Release()
		f.plug = nil
		return
	}
	f.kill()
}

func (f *feeder) kill() {
	if f.plug != nil && f.plug.Kill != nil {
		f.plug.Kill()
	}
	f.flights = nil
	f.leaveWindow()
	if f.reader != nil {
		f.reader.Close()
		f.reader = nil
	}
}
