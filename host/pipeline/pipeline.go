package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/captured"
	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/sdk"
)

// Sink receives what the plugins produce.
type Sink interface {
	// Output writes one output of the named plugin. primary says whether the
	// plugin is the revision's main ASR mapper (its records go to the
	// session's stream.asr.jsonl).
	Output(plugin string, primary bool, o sdk.Output)
	// Gap declares that the plugin mapped nothing after wire seq through.
	Gap(plugin string, primary bool, through uint64, reason string)
}

// Options configure a pipeline.
type Options struct {
	// WirePath is the wire log: created by Start in live mode, read in
	// rebuild mode.
	WirePath   string
	Connection string
	Agent      []string
	Mode       sdk.Mode
	// Revisions maps an input revision to the plugins that run for it; the
	// first that claims the revision is the primary ASR mapper.
	Revisions map[string][]string
	// Routing adds what plugins claim and what is configured for the
	// agent command.
	Routing         Routing
	SchemaRevision  string
	DefaultRevision string
	// ForceRevision, when set, skips detection: the plugins of this
	// revision run whatever the initialize exchange says (convert uses it
	// for stored logs of a known format, e.g. "acp-v1-log").
	ForceRevision string
	Configs       map[string][]byte
	Launch        Launcher
	Sink          Sink
	// Sessions answers what the store knows of a session (live mode), and
	// gives prior stream lines (both modes). Nil: nothing is known.
	Sessions    SessionStore
	Logger      hclog.Logger
	BatchFrames int
	// MaxLine bounds a line assembled for capture (0 = captured.DefaultMaxLine);
	// a longer line is declared as a gap.
	MaxLine int
	// Coalesce is how long capture keeps gathering after the first item of a
	// batch before it flushes the wire log and dispatches (0 = off: only what
	// is ready at once). Only the batching changes, not the frames.
	Coalesce time.Duration
	// PluginWindow is how long capture gathers the batches of its coalescing windows
	// for the plugins after the first (0 = off: each goes to the plugins when the wire
	// log is flushed). The wire log is still flushed at every Coalesce; only the
	// plugins' batches are fewer and larger (a batch costs every plugin a wake, a
	// request and a response whatever its size). Hurry, StopCapture, the end of the
	// queue and a full batch send what was gathered at once.
	PluginWindow time.Duration
	// Doorbell is the tee's (tee.Config.Doorbell): capture waits on it instead of on the
	// queue, so that the tee's send of a chunk does not wake it before the chunk is
	// forwarded. Nil: capture waits on the queue.
	Doorbell     <-chan struct{}
	FeederDepth  int
	MaxRestarts  int
	StallTimeout time.Duration
	// Now is the clock for the wire-log header (tests pin it).
	Now func() time.Time
	// OnBehind, when set, is called once (in a goroutine of its own) the first time the
	// connection falls behind the tee: a live plugin could not take a batch, a plugin is
	// still catching up from the wire log after behindBatches batches in a row, or
	// BacklogReads reads wait for capture. A plugin that catches up at once as it attaches
	// or after a restart does not count.
	OnBehind func()
	// Source, when set, goes into the wire-log header: the connection is a
	// conversion of a stored log (acptap convert), not a recording. Its
	// header then has no startedAt, since no connection started.
	Source *wire.Source
	// FinishReason, when set, is what the plugins are told when the wire
	// log ends (default: "agent exited" live, "end of wire log" in
	// Rebuild); the finisher maps a recorded connection with the live one.
	FinishReason string
	// ResolveSessions (Rebuild only) maps the connection as a live run over
	// Sessions would have: every session the connection names — at its
	// session entry or, in a wire log without one, just before the frame
	// that first names it — is observed through Sessions.Observe then, and
	// the plugins are told what that returned, not what the entry says.
	// OnSession (nil: none) hears of each, with the entry when there is one.
	ResolveSessions bool
	OnSession       func(SessionPoint)
	// OnReadProblem (Rebuild only; nil: none) hears of every wire log line
	// the rebuild could not map (see wire.Tolerant): a rebuild maps past a
	// bad line, with a gap standing in for each entry lost.
	OnReadProblem func(wire.Problem)
	// Scan (Rebuild only; nil: none) is the wire log's pass the caller
	// made already (ScanWire): Rebuild takes its first pass from it instead
	// of reading the log once more, when the file is still the one scanned.
	Scan *WireScan
}

// SessionPoint is where a rebuilt connection first names a session.
type SessionPoint struct {
	ID string
	// Seq is the session entry's, or the naming frame's when there is none.
	Seq uint64
	// Entry is the wire log's session entry; nil when the log has none.
	Entry *wire.Session
	// Resolved is what Sessions.Observe returned: what the plugins get.
	Resolved wire.Session
}

// Routing is how a connection's revision and plugins are chosen beyond
// the initialize exchange and the Revisions table.
type Routing struct {
	// Claims returns the plugins that claim a revision in their Info
	// (Inputs), primary first; the pipeline asks it for a revision the
	// Revisions table has no entry for. Nil: only the table counts.
	Claims func(revision string) []string
	// AgentSchemaRevision is the ACP v2 schema revision configured for
	// this agent command (config agents.<AgentRule>.schema_revision): a
	// protocol-2 connection whose initialize exchange shows no newer
	// draft speaks it. Empty: SchemaRevision.
	AgentSchemaRevision, AgentRule string
}

// Stats are the pipeline's counters.
type Stats struct {
	Frames, GapFrames, GapBytes uint64
	Restarts                    uint64
	Revision                    string
	Plugins                     []string
	Sessions                    []string
}

// Pipeline is capture → router → feeders → sink for one connection.
type Pipeline struct {
	log          hclog.Logger
	opts         Options
	wirePath     string
	batchFrames  int
	maxRestarts  int
	stallTimeout time.Duration
	finishReason string
	sink         Sink
	launch       Launcher

	mu      sync.Mutex // guards wire appends + dispatch, feeders, wireSeq
	wire    *wire.Writer
	wireSeq uint64
	feeders []*feeder
	det     *revisionDetector
	detAt   time.Time // receipt time of the frame that decided the revision
	tracker *sessionTracker

	// Rebuild with ResolveSessions: the sessions each entry (by its seq)
	// stands for, and the sessions to announce before a frame (by the
	// frame's seq). Written before the feeders start, read-only after.
	rebuilding bool
	resolved   map[uint64]wire.Session
	injected   map[uint64][]wire.Session
	win        *window // the decoded wire log the rebuild's feeders share (window.go)
	// inWindow: Rebuild's first pass runs in the window's reader, beside the
	// mapping (firstpass.go). resolved and injected are then written while
	// the feeders read them, under sessMu; firstErr is its read error.
	inWindow bool
	sessMu   sync.RWMutex
	firstErr error

	captureDone chan struct{}
	stop        chan struct{} // closed by StopCapture
	stopOnce    sync.Once
	hurry       chan struct{} // closed by Hurry
	hurryOnce   sync.Once
	// capture's kernel naps (kernelnap_linux.go) while capture runs; napsWoken: Hurry or
	// StopCapture was called (no new one is made).
	napsMu      sync.Mutex
	naps        *kernelNap
	napsWoken   bool
	behindOnce  sync.Once
	behindFor   int                     // batches in a row dispatched while a feeder was catching up
	handover    *Handover               // where capture stopped (StopCapture), under mu
	resume      *[2]captured.LineState  // Continue: the lines in progress to split from
	captureOnly bool                    // Continue: attach writes the revision entry, starts no feeder
	owned       map[uint64]bool         // seqs of batch lines that alias no chunk (captured.Item.Owned)
	awaitMu     sync.Mutex              // one wait per session (awaitSession)
	awaited     map[string]wire.Session // sessions waited for: the state mapped
	wg          sync.WaitGroup
	stats       Stats
	restarts    atomic.Uint64
}

// New makes a pipeline; Start (live) or Rebuild runs it.
func New(opts Options) *Pipeline {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.BatchFrames <= 0 {
		opts.BatchFrames = 256
	}
	if opts.FeederDepth <= 0 {
		opts.FeederDepth = 64
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	p := &Pipeline{
		log: opts.Logger, opts: opts, wirePath: opts.WirePath, batchFrames: opts.BatchFrames,
		maxRestarts: opts.MaxRestarts, stallTimeout: opts.StallTimeout, sink: opts.Sink, launch: opts.Launch,
		det:         newRevisionDetector(opts.SchemaRevision, opts.DefaultRevision),
		tracker:     newSessionTracker(),
		captureDone: make(chan struct{}), stop: make(chan struct{}), hurry: make(chan struct{}), finishReason: "agent exited",
	}
	p.det.agent, p.det.agentRule = opts.Routing.AgentSchemaRevision, opts.Routing.AgentRule
	if opts.ForceRevision != "" {
		p.det.finish(opts.ForceRevision, "forced by the caller")
	}
	return p
}

func (p *Pipeline) startRequest(name string) sdk.StartRequest {
	return sdk.StartRequest{Config: p.opts.Configs[name], Connection: p.opts.Connection,
		WireLog: filepath.Base(p.wirePath), Input: p.det.revision, Mode: p.opts.Mode}
}

func (p *Pipeline) countRestart() { p.restarts.Add(1) }

// wireTarget returns the seq a behind feeder must reach; when the feeder
// has reached it, it is live again (under the same lock capture dispatches
// with, so no batch falls between).
func (p *Pipeline) wireTarget(f *feeder) (target uint64, caughtUp bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.wire != nil {
		if err := p.wire.Flush(); err != nil {
			p.log.Error("flush wire log", "error", err)
		}
	}
	if f.lastFed >= p.wireSeq {
		f.behind.Store(false)
		return p.wireSeq, true
	}
	return p.wireSeq, false
}

// attach starts a feeder per plugin configured for the detected revision.
// Called with p.mu held.
func (p *Pipeline) attach(ctx context.Context) {
	rev := p.det.revision
	names, configured := p.opts.Revisions[rev]
	by := "revisions"
	if !configured && p.opts.Routing.Claims != nil {
		names, by = p.opts.Routing.Claims(rev), "claims"
	}
	p.stats.Revision = rev
	p.log.Info("protocol revision", "revision", rev, "from", p.det.why, "plugins", names, "selectedBy", by)
	if p.wire != nil {
		// At is the deciding frame's time (none when forced or decided at
		// the end), so a converted log is the same bytes every time.
		r := wire.Revision{At: p.detAt, Revision: rev, Reason: p.det.why, Plugins: names, SelectedBy: by}
		if err := p.wire.AppendRevision(r); err != nil {
			p.log.Error("wire log: revision entry not written", "error", err)
		}
	}
	if p.captureOnly {
		return
	}
	if len(names) == 0 {
		p.log.Warn("no plugins configured for this revision; capture only", "revision", rev)
	}
	for i, n := range names {
		f := newFeeder(p, n, i == 0, p.opts.FeederDepth)
		p.feeders = append(p.feeders, f)
		p.stats.Plugins = append(p.stats.Plugins, n)
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			f.run(ctx)
		}()
	}
}

// dispatch offers a batch to every live feeder without ever blocking; the
// feeders get their own copy of the lines (capture's may alias the tee's
// buffers). taken: some feeder has the batch (its array is theirs now).
// Called with p.mu held.
func (p *Pipeline) dispatch(batch []wire.Entry) (taken bool) { return p.offer(batch, true) }

// anyLive says whether a feeder takes live batches (offer sends to it). Called with p.mu held.
func (p *Pipeline) anyLive() bool {
	for _, f := range p.feeders {
		if !f.behind.Load() {
			return true
		}
	}
	return false
}

// offer is dispatch; copyLines false: the batch's lines are the feeders' already
// (gathered, see captureLoop.flush).
func (p *Pipeline) offer(batch []wire.Entry, copyLines bool) (taken bool) {
	live, behind := false, false
	for _, f := range p.feeders {
		b := f.behind.Load() && !f.dead.Load()
		live, behind = live || !f.behind.Load(), behind || b
	}
	p.countBehind(behind)
	if !live {
		return false
	}
	if copyLines {
		ownLines(batch, p.owned)
	}
	for _, f := range p.feeders {
		if f.behind.Load() {
			continue
		}
		select {
		case f.live <- batch:
			taken = true
		default:
			f.behind.Store(true)
			p.fellBehind()
		}
	}
	return taken
}

// ownLines gives the batch's lines one new buffer of their own, but for
// the lines the splitter assembled (owned), which are theirs already: a
// 200 MiB line is not copied once more.
func ownLines(batch []wire.Entry, owned map[uint64]bool) {
	n := 0
	for i := range batch {
		if !owned[batch[i].Seq] {
			n += len(batch[i].Line)
		}
	}
	buf := make([]byte, 0, n)
	for i := range batch {
		if l := batch[i].Line; l != nil && !owned[batch[i].Seq] {
			s := len(buf)
			buf = append(buf, l...)
			batch[i].Line = buf[s:len(buf):len(buf)]
		}
	}
}

// Start creates the wire log and runs capture over the tee's items until
// the queue is closed. It returns at once; Wait waits for the end.
func (p *Pipeline) Start(ctx context.Context, items <-chan captured.Item) error {
	hdr := wire.Header{Connection: p.opts.Connection, Agent: wire.Agent{Command: p.opts.Agent}, Source: p.opts.Source}
	if hdr.Source == nil {
		hdr.StartedAt = p.opts.Now()
	}
	w, err := wire.Create(p.wirePath, hdr)
	if err != nil {
		return err
	}
	p.wire = w
	if p.det.done { // forced revision: attach at once
		p.mu.Lock()
		p.attach(ctx)
		p.mu.Unlock()
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.capture(ctx, items)
	}()
	return nil
}

// maxHeldChunks bounds the chunks capture holds before it flushes the batch
// and releases them, so a long line does not keep the tee's buffers (and its
// queue's byte bound) while it is assembled.
const maxHeldChunks = 8

// capture splits the tee's chunks into lines (captured.Splitter), writes each line
// and gap to the wire log (scrubbed), then offers them to the feeders;
// batches are whatever is ready, up to BatchFrames, or whatever arrives within
// Coalesce of the batch's first item. A chunk is released once
// every line it holds is written and dispatched (dispatch copies the lines a
// live feeder will keep).
func (p *Pipeline) capture(ctx context.Context, items <-chan captured.Item) {
	defer close(p.captureDone)
	c := &captureLoop{p: p, ctx: ctx, items: items, bell: p.opts.Doorbell, split: captured.NewSplitter(p.opts.MaxLine)}
	if p.opts.Coalesce > 0 {
		p.napsMu.Lock()
		if !p.napsWoken {
			p.naps = newKernelNap()
		}
		c.naps = p.naps
		p.napsMu.Unlock()
		defer func() {
			p.napsMu.Lock()
			defer p.napsMu.Unlock()
			if p.naps != nil {
				p.naps.close()
				p.naps = nil
			}
		}()
	}
	if p.resume != nil {
		c.split.SetState(*p.resume)
	}
	if p.opts.Coalesce > 0 {
		c.window = time.NewTimer(p.opts.Coalesce)
		c.window.Stop()
	}
	// Capture runs below the tee (lowerCapture) while it keeps up; once the tee's queue is
	// a quarter full it goes on at the normal priority, so that a long burst slows the tee
	// rather than overflowing the queue (declared gaps), and it goes below again once the
	// queue has drained. (Raised at half full, a 128 MiB burst still lost 1-46k frames of
	// 112-431k in 5 of 8 runs at load 9; at a quarter, 22.7k once in 6.)
	low := true
	for {
		var r loopEnd
		if low {
			done := make(chan loopEnd, 1)
			go func() {
				defer p.lowerCapture()()
				done <- c.run(true)
			}()
			r = <-done
		} else {
			r = c.run(false)
		}
		if r != switchPriority {
			return
		}
		low = !low
		p.log.Debug("capture priority", "lowered", low, "queue_use", c.use)
	}
}

// Capture's priority follows the tee's queue: up past a quarter full, down again below a
// sixteenth.
const (
	raiseAbove = 0.25
	lowerBelow = 0.0625
)

// loopEnd is why captureLoop.run returned.
type loopEnd int

const (
	queueClosed    loopEnd = iota // capture is complete
	stoppedCapture                // StopCapture
	switchPriority                // the queue crossed a threshold: run on at the other priority
)

// yieldAfter is the read size after which capture yields (see take).
const yieldAfter = 16 << 10

// captureLoop is capture's state, carried across the goroutines it runs on.
type captureLoop struct {
	p      *Pipeline
	ctx    context.Context
	items  <-chan captured.Item
	bell   <-chan struct{} // Options.Doorbell
	split  *captured.Splitter
	batch  []wire.Entry
	held   []captured.Item // chunks whose bytes the batch may alias
	window *time.Timer
	napper *time.Timer // nap's
	// naps: kernel naps (nil: every nap on napper); parkedAt: when the last nap on napper
	// ended (see nap).
	naps     *kernelNap
	parkedAt time.Time
	// pend is what flush gathered for the plugins (PluginWindow), their lines copied
	// (the chunks are released), until pendUntil; pendAt fires then.
	pend      []wire.Entry
	pendUntil time.Time
	pendAt    *time.Timer
	low       bool    // run's priority: below the tee
	cross     bool    // a chunk saw the queue past the threshold of low: switch after its batch
	use       float64 // the tee's queue, as full as the last chunk saw it
	// steady: lines came during the last window's nap, so the next window is a nap from its
	// flush rather than a wait at the doorbell for its first line (see run).
	steady bool
	// The burst policy's state (burst.go): the tee's byte bound, from the chunks taken; the
	// least it held since the last hold; catchUp: a hold ran to maxHold, and capture does not
	// hold again until it has caught up.
	queue   *captured.Bound
	least   int64
	catchUp bool
}

// doorbellWaits counts capture's waits at the doorbell with nothing queued (tests).
var doorbellWaits atomic.Int64

// onCaptureWait, when set, is called as capture starts a wait at the doorbell or a nap
// (tests: the tee's lines arrive then).
var onCaptureWait atomic.Pointer[func()]

func captureWaits() {
	if f := onCaptureWait.Load(); f != nil {
		(*f)()
	}
}

func (c *captureLoop) emit(it captured.Item) {
	c.batch = c.p.appendItem(c.ctx, c.batch, it)
	if len(c.batch) >= c.p.batchFrames {
		c.flush(false)
	}
}

func (c *captureLoop) release() {
	for i := range c.held {
		c.held[i].Release()
		c.held[i] = captured.Item{}
	}
	c.held = c.held[:0]
}

func (c *captureLoop) take(it captured.Item) {
	c.split.Split(it, c.emit)
	if it.Chunk != nil {
		// The queue is bounded in bytes and in items: short reads (slab parts) fill
		// the items long before the bytes, so the fuller of the two counts.
		if q := it.Chunk.Queue(); q != nil {
			c.queue = q
		}
		c.use = max(it.Chunk.QueueUse(), float64(len(c.items))/float64(max(cap(c.items), 1)))
		c.cross = c.cross || c.low && c.use > raiseAbove || !c.low && c.use < lowerBelow
		c.held = append(c.held, it)
		// A read is up to 64 KiB of lines (a few hundred µs of work):
		// the tee's copy goroutines, woken by their pipes, get a P
		// between two reads instead of after Go's 10 ms time slice. Not
		// after a short read: on capture's locked thread a yield costs four
		// context switches, far more than the read's lines.
		if len(it.Chunk.Data) >= yieldAfter {
			runtime.Gosched()
		}
	}
}

// wait returns the next item of the queue, waiting on the doorbell when there is one (see
// Options.Doorbell), else on the queue. got false: stop was closed, or window or hurry (nil:
// none) fired, first.
func (c *captureLoop) wait(window <-chan time.Time, hurry <-chan struct{}) (it captured.Item, ok, got bool) {
	if c.bell == nil {
		select {
		case it, ok = <-c.items:
			return it, ok, true
		case <-window:
		case <-hurry:
		case <-c.p.stop:
		}
		return it, false, false
	}
	for {
		select {
		case it, ok = <-c.items:
			return it, ok, true
		default:
		}
		// The tee rings after every chunk it queued and after closing the queue, and a
		// ring that finds one pending is kept: no chunk waits here unnoticed.
		select {
		case <-c.bell:
			continue // rung for a chunk taken already: look again
		default:
		}
		doorbellWaits.Add(1)
		captureWaits()
		select {
		case <-c.bell:
		case <-window:
			return it, false, false
		case <-hurry:
			return it, false, false
		case <-c.p.stop:
			return it, false, false
		}
	}
}

// maxNap bounds one nap of capture in its coalescing window (see run).
const maxNap = 2 * time.Millisecond

// parkEvery: on its lowered thread capture naps in the kernel (kernelNap), and parks on its
// timer once every parkEvery. A goroutine that only sleeps in syscalls keeps its P on one
// scheduling tick, and after 10 ms of that the runtime's sysmon retakes the P and resets
// itself to 20 µs naps for ~25 ms (measured: sysmon 0.2 → 4 switches a round trip with every
// nap in the kernel; docs/benchmarks-history.md, fifteenth round, rtp99). Half of that keeps
// the tick moving.
var parkEvery = 5 * time.Millisecond

// kernelNaps counts capture's naps in the kernel (tests).
var kernelNaps atomic.Int64

// nap sleeps until end, for at most maxNap, or until stop or Hurry; false when the window
// had ended already.
func (c *captureLoop) nap(end time.Time) bool {
	d := time.Until(end)
	if d <= 0 {
		return false
	}
	captureWaits()
	if c.naps != nil && c.low && time.Since(c.parkedAt) < parkEvery {
		select {
		case <-c.p.stop:
			return true
		case <-c.p.hurry:
			return true
		default:
		}
		kernelNaps.Add(1)
		c.naps.sleep(min(d, maxNap)) // (Hurry or StopCapture from here on ends it)
		return true
	}
	if c.napper == nil {
		c.napper = time.NewTimer(min(d, maxNap))
	} else {
		c.napper.Reset(min(d, maxNap))
	}
	select {
	case <-c.napper.C:
	case <-c.p.stop:
		c.napper.Stop()
	case <-c.p.hurry:
		c.napper.Stop()
	}
	c.parkedAt = time.Now()
	return true
}

// wakeNaps ends capture's kernel nap, and every later one (Hurry, StopCapture).
func (p *Pipeline) wakeNaps() {
	p.napsMu.Lock()
	defer p.napsMu.Unlock()
	p.napsWoken = true
	if p.naps != nil {
		p.naps.wake()
	}
}

// Hurry ends capture's coalescing: from now on it writes what the tee queued as soon as it
// is there, rather than sleeping out a window first. The recording calls it once the agent
// has exited, so that what is left reaches the wire log (and the exit) without waiting.
func (p *Pipeline) Hurry() { p.hurryOnce.Do(func() { close(p.hurry); p.wakeNaps() }) }

// hurried says whether Hurry was called.
func (p *Pipeline) hurried() bool {
	select {
	case <-p.hurry:
		return true
	default:
		return false
	}
}

// run captures batch by batch until the queue is closed, capture is stopped, or (the
// batch written and its chunks released) the queue crosses the threshold of the priority
// run is at (low: below the tee).
func (c *captureLoop) run(low bool) loopEnd {
	p, items := c.p, c.items
	c.low, c.cross = low, false
	for {
		var it captured.Item
		var ok, got bool
		windowEnd := time.Time{} // set below once the window's first line is taken
		if low {
			c.holdOff() // a burst: capture comes after it (burst.go)
		}
		if c.steady && len(items) == 0 && c.bell != nil && c.window != nil && !p.hurried() && !p.stopped() {
			// Lines came through the last window: this one is a nap from its flush, and what
			// came meanwhile is written at its end. Waiting at the doorbell instead would
			// wake capture twice a window, at the first line and at the window's end; at a
			// line a millisecond that was most of capture's wakes. Each line still waits at
			// most tee.coalesce, and a nap that takes no line goes back to the doorbell.
			c.steady = false
			end := time.Now().Add(p.opts.Coalesce)
			for !got && c.nap(end) && !p.stopped() && !p.hurried() {
				select {
				case it, ok = <-items:
					// The rest of the window as any other's (naps until end, the queue drained).
					got, c.steady, windowEnd = true, true, end
				default:
				}
			}
			if !got {
				continue // (stopped or hurried: the top of the loop takes it from there)
			}
		} else if !p.stopped() { // a closed stop wins over queued items
			c.steady = false
			window, hurry := c.pendWait()
			it, ok, got = c.wait(window, hurry)
			if !got && !p.stopped() { // the gathered batches are due, or Hurry
				c.flush(true)
				continue
			}
		}
		if !got {
			c.flush(true)
			p.stopCapture(c.split)
			c.release()
			return stoppedCapture
		}
		if !ok {
			break
		}
		c.take(it)
		if len(items) >= BacklogReads {
			p.fellBehind()
		}
		if c.window != nil {
			c.window.Reset(p.opts.Coalesce)
		}
		if windowEnd.IsZero() {
			windowEnd = time.Now().Add(p.opts.Coalesce)
		}
		napped := false // a nap of this window's returned: a line taken after it makes the next window steady
	more:
		for len(c.batch) < p.batchFrames && len(c.held) < maxHeldChunks && !p.stopped() && !c.cross {
			select {
			case it, ok = <-items:
				if !ok {
					break more
				}
				c.take(it)
				c.steady = c.steady || napped
				continue
			default:
			}
			if c.window == nil {
				break more
			}
			if c.bell != nil && !p.hurried() {
				// With a doorbell, capture naps through the window instead of waking at each
				// ring, and takes what was queued after each nap: its thread is locked
				// (lowered), and each wake of a locked thread costs Go's scheduler four
				// context switches, which at a line a millisecond were most of capture's
				// CPU. A nap is at most maxNap, so a burst that starts meanwhile finds the
				// queue drained as often as that, whatever tee.coalesce is.
				if !c.nap(windowEnd) {
					break more
				}
				napped = true
				continue
			}
			next, nok, got := c.wait(c.window.C, nil)
			if !got {
				break more
			}
			if ok = nok; !ok {
				break more
			}
			c.take(next)
		}
		if c.window != nil {
			c.window.Stop()
		}
		c.flush(!ok)
		c.release()
		if !ok {
			break
		}
		if c.cross {
			return switchPriority
		}
	}
	c.split.End(time.Now(), c.emit)
	c.flush(true)
	p.mu.Lock()
	if !p.det.done {
		p.det.end()
		p.attach(c.ctx)
	}
	if err := p.wire.Flush(); err != nil {
		p.log.Error("flush wire log", "error", err)
	}
	p.mu.Unlock()
	return queueClosed
}

// flush ends a batch of capture: it flushes the wire log and offers the batch to the
// feeders, or, within Options.PluginWindow, gathers it with the batches before and after
// it (its lines copied, so that its chunks can be released) and offers them together once
// the window is over or they fill a batch. due: offer everything now (the end of the
// queue, StopCapture, Hurry, the window over).
func (c *captureLoop) flush(due bool) {
	p := c.p
	due = due || p.opts.PluginWindow <= 0 || p.hurried()
	if len(c.batch) == 0 && (len(c.pend) == 0 || !due && time.Now().Before(c.pendUntil)) {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(c.batch) > 0 {
		if err := p.wire.Flush(); err != nil {
			p.log.Error("flush wire log", "error", err)
		}
	}
	// With no feeder taking live batches (capture only, before the revision is known,
	// or every plugin behind, catching up from the wire log, as in a burst) nothing is
	// gathered: dispatch drops the batch without copying its lines.
	due = due || !p.anyLive()
	if due && len(c.pend) == 0 {
		if p.dispatch(c.batch) {
			c.batch = nil // the feeders have it: appendItem makes the next
		} else {
			// No feeder took it (capture only, or every plugin catching up, as in a
			// burst): the array is capture's again. A new one each batch was most of
			// what a recording allocates in a burst, and so most of its GC cycles, whose
			// mark workers run beside the tee at its priority.
			clear(c.batch) // its lines alias chunks that are released next
			c.batch = c.batch[:0]
		}
		clear(p.owned)
		return
	}
	if len(c.pend)+len(c.batch) > p.batchFrames {
		c.offerPend()
	}
	if len(c.batch) > 0 {
		ownLines(c.batch, p.owned)
		clear(p.owned)
		if len(c.pend) == 0 {
			c.pendUntil = time.Now().Add(p.opts.PluginWindow)
			c.pend = make([]wire.Entry, 0, p.batchFrames)
		}
		c.pend = append(c.pend, c.batch...)
		c.batch = c.batch[:0] // its lines are copied: the array is capture's again
	}
	if due || len(c.pend) >= p.batchFrames || !time.Now().Before(c.pendUntil) {
		c.offerPend()
	}
}

// offerPend offers what flush gathered. The caller holds p.mu.
func (c *captureLoop) offerPend() {
	if len(c.pend) > 0 {
		c.p.offer(c.pend, false)
		c.pend = nil
	}
}

// pendWait gives run's wait for the next item what ends it early while flush holds
// gathered batches: a timer at their window's end, and Hurry.
func (c *captureLoop) pendWait() (<-chan time.Time, <-chan struct{}) {
	if len(c.pend) == 0 {
		return nil, nil
	}
	if c.p.hurried() {
		c.flush(true)
		return nil, nil
	}
	d := time.Until(c.pendUntil)
	if c.pendAt == nil {
		c.pendAt = time.NewTimer(d)
	} else {
		c.pendAt.Reset(d)
	}
	return c.pendAt.C, c.p.hurry
}

func (p *Pipeline) appendItem(ctx context.Context, batch []wire.Entry, it captured.Item) []wire.Entry {
	e := wire.Entry{Type: wire.TypeFrame, At: it.At, Dir: it.Dir, Line: it.Line, NoLF: it.NoLF}
	p.mu.Lock() // Snapshot reads the counters under it
	defer p.mu.Unlock()
	if it.Gap != nil {
		e = wire.Entry{Type: wire.TypeGap, At: it.At, Dir: it.Dir, Gap: sdk.Gap{Frames: it.Gap.Frames, Bytes: it.Gap.Bytes, Reason: it.Gap.Reason}}
		p.stats.GapFrames += it.Gap.Frames
		p.stats.GapBytes += it.Gap.Bytes
	} else {
		p.stats.Frames++
	}
	if e.Type == wire.TypeFrame {
		for _, id := range p.tracker.scan(e.Line) {
			batch = p.appendSession(batch, id, e)
		}
	}
	// The writer scrubs MCP server secrets (ASR-712) and returns the entry as
	// written: the plugins map exactly what the wire log holds.
	e, err := p.wire.AppendEntry(e)
	if err != nil {
		p.log.Error("wire log append failed; frame not captured", "error", err)
		return batch
	}
	p.wireSeq = e.Seq
	if it.Owned && len(e.Line) > 0 && &e.Line[0] == &it.Line[0] { // not replaced by the scrubber
		if p.owned == nil {
			p.owned = map[uint64]bool{}
		}
		p.owned[e.Seq] = true
	}
	if !p.det.done && e.Type == wire.TypeFrame && p.det.observe(e.Dir, e.Line) {
		p.detAt = e.At
		p.attach(ctx)
	}
	if batch == nil { // the batch was handed to the feeders: a new one, sized once
		batch = make([]wire.Entry, 0, p.batchFrames)
		batchesMade.Add(1)
	}
	return append(batch, e)
}

// appendSession records what the store knows of a session the connection
// names for the first time, before the frame that names it. Called with
// p.mu held.
func (p *Pipeline) appendSession(batch []wire.Entry, id string, at wire.Entry) []wire.Entry {
	s := wire.Session{ID: id}
	if p.opts.Sessions != nil {
		o, err := p.opts.Sessions.Observe(id)
		if err != nil {
			p.log.Error("session state unavailable; mapping it as new", "session", id, "error", err)
		}
		s.Connections, s.PriorLines, s.PluginLines, s.AEPLines, s.Concurrent = o.Connections, o.PriorLines, o.PluginLines, o.AEPLines, o.Concurrent
	}
	e := wire.Entry{Type: wire.TypeSession, At: at.At, Dir: at.Dir, Session: s}
	seq, err := p.wire.Append(e)
	if err != nil {
		p.log.Error("wire log append failed; session entry not captured", "session", id, "error", err)
		return batch
	}
	e.Seq = seq
	p.wireSeq = seq
	p.stats.Sessions = append(p.stats.Sessions, id)
	return append(batch, e)
}

// Rebuild maps an existing wire log (no capture): the outputs a live run
// would have written. It reads past bad lines (Options.OnReadProblem).
func (p *Pipeline) Rebuild(ctx context.Context) error {
	p.finishReason = "end of wire log"
	if p.opts.FinishReason != "" {
		p.finishReason = p.opts.FinishReason
	}
	p.rebuilding = true
	if s := p.opts.Scan; s != nil && s.fits(p.wirePath) {
		p.replay(s) // the pass below, done when the rebuild planned (scan.go)
		return p.attachRebuild(ctx)
	}
	if l, ok := p.opts.Sessions.(SessionLocker); shareWindow && firstPassInWindow && !(ok && l.Locking()) {
		// (A session lock waits until capture is done, which the first pass
		// in the window is: a feeder waiting for one would hold the window,
		// and so the pass, back. No rebuild, finisher or conversion locks.)
		return p.rebuildInWindow(ctx)
	}
	r, err := wire.Open(p.wirePath)
	if err != nil {
		return err
	}
	tr := wire.NewTolerant(r, p.opts.OnReadProblem)
	defer tr.Close()
	for {
		e, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", p.wirePath, err)
		}
		p.wireSeq = e.Seq
		p.count(e)
		if !p.det.done && e.Type == wire.TypeFrame {
			p.det.observe(e.Dir, e.Line)
		}
		if p.opts.ResolveSessions {
			p.resolve(e)
		}
	}
	return p.attachRebuild(ctx)
}

// attachRebuild starts the feeders of a rebuild once its first pass is done.
func (p *Pipeline) attachRebuild(ctx context.Context) error {
	p.det.end()
	p.mu.Lock()
	p.attach(ctx)
	p.mu.Unlock()
	close(p.captureDone)
	return nil
}

// resolve observes the sessions entry e names first, as appendSession does
// live.
func (p *Pipeline) resolve(e wire.Entry) {
	switch e.Type {
	case wire.TypeSession:
		if p.tracker.known[e.Session.ID] {
			return // a second entry for a session: the plugins ignore it too
		}
		p.tracker.known[e.Session.ID] = true
		entry := e.Session
		s := p.observeSession(e.Seq, entry.ID, &entry)
		p.sessMu.Lock()
		p.resolveInit()
		p.resolved[e.Seq] = s
		p.sessMu.Unlock()
	case wire.TypeFrame:
		p.injectSessions(e.Seq, p.tracker.scan(e.Line))
	}
}

// Wait waits for capture and every feeder to finish, closes the wire log,
// and returns the counters.
func (p *Pipeline) Wait() (Stats, error) {
	p.wg.Wait()
	err := p.CloseWire()
	p.stats.Restarts = p.restarts.Load()
	if p.firstErr != nil {
		err = errors.Join(p.firstErr, err)
	}
	return p.stats, err
}

// CaptureDone is closed when capture has written the last entry of the
// wire log (live), or when the feeders are attached (Rebuild).
func (p *Pipeline) CaptureDone() <-chan struct{} { return p.captureDone }

// Done is closed when capture and every feeder have finished (Wait then
// returns at once).
func (p *Pipeline) Done() <-chan struct{} {
	done := make(chan struct{})
	go func() {
		p.wg.Wait()
		close(done)
	}()
	return done
}

// Mapped is closed when capture is done and every feeder has delivered its
// last output; the plugins may still be shutting down (Done).
func (p *Pipeline) Mapped() <-chan struct{} {
	mapped := make(chan struct{})
	go func() {
		<-p.captureDone
		p.mu.Lock()
		feeders := append([]*feeder(nil), p.feeders...)
		p.mu.Unlock()
		for _, f := range feeders {
			<-f.mapped
		}
		close(mapped)
	}()
	return mapped
}

// CloseWire closes (and syncs) the wire log once capture is done, without
// waiting for the feeders (record hands a connection whose mapping is
// behind to a finisher; the feeders go on reading the closed file until
// they are stopped). It is idempotent.
func (p *Pipeline) CloseWire() error { return p.closeWire(true) }

// CloseWireNoSync is CloseWire without waiting for stable storage (the
// finisher syncs the file before it maps it).
func (p *Pipeline) CloseWireNoSync() error { return p.closeWire(false) }

func (p *Pipeline) closeWire(sync bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.wire == nil {
		return nil
	}
	w := p.wire
	p.wire = nil
	close := w.Close
	if !sync {
		close = w.CloseNoSync
	}
	if err := close(); err != nil {
		return fmt.Errorf("close wire log: %w", err)
	}
	return nil
}

// Behind says whether some feeder is catching up from the wire log: its
// mapping will not finish at once.
func (p *Pipeline) Behind() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, f := range p.feeders {
		if f.behind.Load() && !f.dead.Load() {
			return true
		}
	}
	return false
}

// Snapshot returns the counters as they are now.
func (p *Pipeline) Snapshot() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.Plugins = append([]string(nil), s.Plugins...)
	s.Sessions = append([]string(nil), s.Sessions...)
	s.Restarts = p.restarts.Load()
	return s
}

func (p *Pipeline) count(e wire.Entry) {
	if e.Type == wire.TypeSession {
		p.stats.Sessions = append(p.stats.Sessions, e.Session.ID)
		if c, ok := p.sink.(interface{ Continue(wire.Session) }); ok && !p.opts.ResolveSessions {
			c.Continue(e.Session)
		}
		return
	}
	if e.Type == wire.TypeGap {
		p.stats.GapFrames += e.Gap.Frames
		p.stats.GapBytes += e.Gap.Bytes
		return
	}
	p.stats.Frames++
}
