package recording

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/captured"
	"github.com/acptap/acptap/host/config"
	"github.com/acptap/acptap/host/finisher"
	"github.com/acptap/acptap/host/pipeline"
	"github.com/acptap/acptap/host/priority"
	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/host/storesink"
	"github.com/acptap/acptap/host/tee"
	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/aep"
)

// Settings say what a recording runs and where its bytes go.
type Settings struct {
	Config *config.Config
	// Agent is the agent's argv.
	Agent []string
	// Self is the acptap binary: the built-in plugins and the detached
	// finisher run from it.
	Self string
	// Stdin, Stdout and Stderr are the editor's (see tee.Config).
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Watchdog makes the command that kills the agent's process group if
	// acptap dies without ending it (tee.Config.Watchdog).
	Watchdog func(pgid int) *exec.Cmd
	// ExitsAfterShutdown: the process exits as soon as Shutdown returns (acptap record),
	// so the finisher on standby waits for that exit rather than for the marker's release
	// (finisher.Marker.HoldParents): its start does not compete with the exit's teardown.
	ExitsAfterShutdown bool
	// Finisher is the command line after Self of a detached finisher,
	// without what it finishes: the recording appends "--store", the
	// store's root and the connection (or "--pending"). Empty: no
	// finisher takes a connection over; Shutdown maps it to the end.
	Finisher []string
	// Version is acptap's, for the OTLP resource.
	Version string
	// Stored, when set, runs once the store is set up, beside the
	// recording (the team-store shipper).
	Stored func(logger hclog.Logger)
}

// setupWait bounds how long Shutdown waits, once the agent has exited, for
// a store set-up still under way (the agent exited within milliseconds): a
// store that hangs (a dead network mount) never holds the editor.
const setupWait = 500 * time.Millisecond

// mappingGrace is how long Shutdown lets the plugins finish once capture
// has written the wire log to its end: a mapping that is caught up
// finishes within it and the connection is complete when record exits;
// one that is behind is handed to a detached finisher (host/finisher) and
// record exits with the agent at once.
const mappingGrace = 20 * time.Millisecond

// Recording is one recorded connection: the tee running the agent, and
// beside it the wire log, the pipeline, the store sink and the forwarders
// (AEP outbox, OTLP exporter). Start runs the agent first (nothing delays
// its exec) and sets the rest up off the tee's path; Wait returns when the
// agent has exited and its last byte is forwarded; Shutdown finishes the
// recording within mappingGrace or hands it to a detached finisher, so the
// editor is never held.
type Recording struct {
	s        Settings
	started  time.Time
	ctx      context.Context
	cancel   context.CancelFunc
	queue    chan captured.Item
	arena    *captured.Arena // the tee's read buffers; handed to the finisher at the exit
	arenaErr error
	sliceErr error         // from priority.ShortenSlices, once the agent started
	bell     chan struct{} // the tee's doorbell (tee.Config.Doorbell), capture's to wait on

	teeDone   chan teeResult
	setupDone chan *recorder
	code      int
	waited    bool
	once      sync.Once
}

type teeResult struct {
	code int
	err  error
}

// New prepares a recording; Start runs it.
func New(s Settings) *Recording {
	return &Recording{s: s, started: time.Now(), teeDone: make(chan teeResult, 1), setupDone: make(chan *recorder, 1)}
}

// PassThrough runs the agent through the tee with nothing observing (the
// editor still gets its agent when acptap's own settings are broken). It
// returns the agent's exit code and the tee's error, if any.
func PassThrough(s Settings) (int, error) {
	q := make(chan captured.Item, 1)
	go func() {
		for it := range q {
			it.Release()
		}
	}()
	return tee.Run(context.Background(), tee.Config{Agent: s.Agent, Stdin: s.Stdin, Stdout: s.Stdout,
		Stderr: s.Stderr, Queue: q, Signals: true, Watchdog: s.Watchdog})
}

// Start starts the agent and, once it runs, sets up the store, the
// pipeline and the forwarders beside it. An error: the agent could not be
// started; nothing was set up, and ExitCode says what to exit with.
func (r *Recording) Start(ctx context.Context) error {
	cfg := r.s.Config
	r.ctx, r.cancel = context.WithCancel(ctx)
	r.queue = make(chan captured.Item, cfg.Tee.QueueFrames)
	r.arena, r.arenaErr = captured.NewQueueArena(int64(cfg.Tee.QueueBytes))
	r.bell = make(chan struct{}, 1)
	agentStarted := make(chan struct{})
	go func() {
		code, err := tee.Run(r.ctx, tee.Config{Agent: r.s.Agent, Stdin: r.s.Stdin, Stdout: r.s.Stdout,
			Stderr: r.s.Stderr, Queue: r.queue, QueueBytes: cfg.Tee.QueueBytes, Arena: r.arena, Doorbell: r.bell, Signals: true,
			OnStart: func(int) {
				// After the agent's start, so that the agent keeps the default slice.
				r.sliceErr = priority.ShortenSlices()
				close(agentStarted)
			}, Watchdog: r.s.Watchdog})
		r.teeDone <- teeResult{code, err}
	}()
	// Nothing is set up for an agent that could not be started: no wire
	// log, no plugins.
	select {
	case <-agentStarted:
	case res := <-r.teeDone:
		select {
		case <-agentStarted: // it started and is gone already: record it
			r.teeDone <- res
		default:
			r.code, r.waited = res.code, true
			r.cancel()
			if res.err == nil {
				res.err = errors.New("acptap: the agent could not be started")
			}
			return res.err
		}
	}
	// Set-up runs beside the tee, never on its exit path: the log file is
	// opened in the background (it may be a FIFO), and a store that hangs
	// is abandoned after setupWait.
	go func() { r.setupDone <- r.setUp() }()
	return nil
}

// Wait waits for the agent to exit; every byte of the agent is forwarded
// by then. It returns the exit code acptap exits with (the agent's;
// 128+n when it was killed by signal n) and the tee's error, if any.
func (r *Recording) Wait() (int, error) {
	if r.waited {
		return r.code, nil
	}
	res := <-r.teeDone
	r.code, r.waited = res.code, true
	return res.code, res.err
}

// ExitCode is the exit code Wait returned (or Start's, when the agent
// could not be started).
func (r *Recording) ExitCode() int { return r.code }

// Shutdown ends the recording once the agent has exited (call Wait
// first): capture writes the wire log to its end; a mapping that finishes
// within mappingGrace completes the connection here; otherwise the
// connection goes to a detached finisher and Shutdown returns at once,
// whatever the backlog or a hung plugin. It is idempotent.
func (r *Recording) Shutdown(ctx context.Context) error {
	r.once.Do(func() {
		if r.cancel == nil {
			return
		}
		defer r.cancel()
		var rec *recorder
		select {
		case rec = <-r.setupDone:
		case <-time.After(setupWait):
			fmt.Fprintf(r.s.Stderr, "acptap: not recorded: the store was not set up within %s of the agent's exit\n", setupWait)
			return
		}
		if rec != nil {
			rec.finish(r.cancel, r.code)
		}
	})
	return nil
}

// recorder is a recording's set-up: the pipeline and what it writes to.
type recorder struct {
	s         Settings
	ctx       context.Context
	logger    hclog.Logger
	logCloser io.Closer
	st        *store.Store
	conn      string
	p         *pipeline.Pipeline
	sink      *storesink.Sink
	outbox    *Outbox
	exporter  *Exporter        // OTLP export: with it, record maps to the end itself
	forward   components       // the forwarders, started before the pipeline
	marker    *finisher.Marker // nil: no finisher can take over; record maps to the end
	wireMS    float64          // agent exited → wire log complete, in ms
	locks     *store.SessionLocks
	queue     chan captured.Item // the tee's (closed by the time finish runs)
	arena     *captured.Arena    // the tee's buffers (nil: the heap pool)
	bell      <-chan struct{}    // the tee's doorbell
	standby   standby
	exiting   atomic.Bool // finish has begun
}

// setUp opens the log, the store and the wire log and starts the pipeline
// on the tee's queue. nil: nothing is recorded (said on stderr), and the
// queue is drained.
func (r *Recording) setUp() *recorder {
	cfg := r.s.Config
	rec := &recorder{s: r.s, ctx: r.ctx, conn: newConnectionID(r.started)}
	logger, logCloser, err := config.NewLoggerAsync(cfg, "acptap", func(err error) {
		fmt.Fprintf(r.s.Stderr, "acptap: log: %s\n", oneLine(err))
	})
	if err == nil {
		rec.logger, rec.logCloser = logger, logCloser
		rec.st, err = store.Open(cfg.Store)
	}
	var plugins *Plugins
	if err == nil {
		plugins, err = NewPlugins(cfg, r.s.Self, rec.logger)
	}
	if err == nil {
		rec.queue, rec.arena, rec.bell = r.queue, r.arena, r.bell
		if r.arenaErr != nil {
			rec.logger.Debug("the tee's buffers are on the heap; the exit copies the queue", "error", r.arenaErr)
		}
		if r.sliceErr != nil {
			rec.logger.Debug("the copy path keeps the default scheduler slice", "error", r.sliceErr)
		}
		err = rec.start(plugins, r.queue)
	}
	if err != nil {
		// Storage is broken: the session still runs; nothing is recorded.
		fmt.Fprintf(r.s.Stderr, "acptap: not recording: %s\n", oneLine(err))
		closeQuietly(rec.logCloser)
		go func() {
			for it := range r.queue {
				it.Release()
			}
		}()
		return nil
	}
	if r.s.Stored != nil {
		r.s.Stored(rec.logger)
	}
	rec.spawnPending()
	return rec
}

// start creates the marker, the sink and the forwarders, then the
// pipeline on the queue.
func (rec *recorder) start(plugins *Plugins, queue <-chan captured.Item) error {
	cfg := rec.s.Config
	// The marker comes before the wire log: a connection killed between
	// the two has a marker without a log, which the next command drops.
	if len(rec.s.Finisher) > 0 {
		var merr error
		if rec.marker, merr = finisher.Create(rec.st, rec.conn); merr != nil {
			rec.logger.Warn("no finisher can take this connection over; record maps it to the end before exiting", "error", merr)
		} else if rec.s.ExitsAfterShutdown {
			rec.marker.HoldParents()
		}
	}
	rec.sink = storesink.New(rec.st, rec.logger)
	rec.locks = rec.st.Locks() // one writer process per session at a time (issue 18.6)
	rec.sink.Locks = rec.locks
	if rec.outbox = NewOutbox(cfg, rec.logger); rec.outbox != nil {
		forwardTo(rec.sink, rec.outbox)
		rec.forward = append(rec.forward, rec.outbox)
	}
	if rec.exporter = NewExporter(cfg, rec.st, rec.s.Version, rec.logger); rec.exporter != nil {
		forwardTo(rec.sink, rec.exporter)
		rec.forward = append(rec.forward, rec.exporter)
	}
	if err := rec.forward.start(rec.ctx); err != nil {
		return err
	}
	plugins.background()
	po := plugins.Options(rec.s.Agent)
	po.WirePath, po.Connection, po.Agent, po.Mode = rec.st.WirePath(rec.conn), rec.conn, rec.s.Agent, sdk.ModeRecord
	po.Sink, po.Sessions, po.Coalesce, po.Doorbell = rec.sink, rec.sessions(), cfg.Tee.Coalesce, rec.bell
	po.PluginWindow = cfg.Tee.PluginWindow
	if rec.marker != nil && !rec.foreground() {
		po.OnBehind = func() {
			if !rec.exiting.Load() { // the exit decides for itself
				rec.startStandby()
			}
		}
	}
	rec.p = pipeline.New(po)
	rec.logger.Info("recording", "connection", rec.conn, "agent", aep.RedactArgv(rec.s.Agent), "wire", rec.st.WirePath(rec.conn))
	if err := rec.p.Start(rec.ctx, queue); err != nil {
		if rec.marker != nil {
			_ = rec.marker.Done()
		}
		return err
	}
	return nil
}

// finish ends the recording once the agent has exited.
func (rec *recorder) finish(cancel context.CancelFunc, code int) {
	defer closeQuietly(rec.logCloser)
	agentGone := time.Now()
	rec.exiting.Store(true)
	rec.p.Hurry() // what the tee queued goes to the wire log at once
	// A mapping that is already catching up from the wire log when the
	// agent exits is handed over whatever happens next (a behind feeder
	// stays behind): its feeders and plugins stop now, so that capture,
	// which writes what the tee queued, has the CPUs to itself (everything
	// they would map, the finisher maps again from the wire log). Its
	// finisher is started now too, so that its fork, exec and start-up
	// overlap with capture instead of following it; it maps once acptap
	// has exited (finisher.SpawnEarly).
	foreground := rec.foreground()
	handOver := rec.marker != nil && !foreground && rec.behind()
	spawned := false
	var spooled *finisher.Spool
	if handOver {
		cancel()
		spawned, spooled = rec.handOverEarly()
	}
	<-rec.p.CaptureDone()
	// How long capture took to write what the tee had queued when the agent
	// exited: the part of acptap's exit that is not mapping.
	rec.wireMS = float64(time.Since(agentGone).Microseconds()) / 1000
	// OTLP export is not handed over (the finisher would export again what
	// the foreground exported live, and spans close at the end of the
	// mapping): with it configured, record maps to the end as before; so
	// it does when the user asked for it (record.map_before_exit). The
	// pending marker stays until then, so a record killed meanwhile is
	// still completed by the next command.
	if rec.marker == nil || foreground {
		wireErr := rec.p.CloseWire()
		stats, werr := rec.p.Wait()
		serr := rec.sink.Close()
		_ = rec.forward.shutdown(context.Background())
		rec.logFinished(code, stats, errors.Join(wireErr, werr, serr))
		if rec.marker != nil {
			rec.markDone()
		}
		return
	}
	// A mapping that is caught up finishes within the grace; one whose
	// feeders are catching up from the wire log does not: it is handed
	// over at once.
	if !handOver && !rec.p.Behind() {
		// Capture has written the wire log to its end (and flushed it): it goes to stable
		// storage while the plugins finish, not after them (an fsync of a session's wire log
		// took 1-14 ms here, and waits behind whatever else the disk writes). A sync still
		// running when the mapping is handed over is the finisher's to wait for.
		synced := make(chan error, 1)
		wirePath := rec.st.WirePath(rec.conn)
		go func() { synced <- wire.SyncFile(wirePath) }()
		deadline := time.NewTimer(mappingGrace)
		defer deadline.Stop()
		select {
		case <-rec.p.Mapped():
			// The plugins are not waited for: they die with acptap.
			wireErr := errors.Join(<-synced, rec.p.CloseWireNoSync())
			stats := rec.p.Snapshot()
			serr := rec.sink.Close()
			if err := errors.Join(wireErr, serr); err == nil && (rec.outbox == nil || rec.outbox.drained(deadline.C)) {
				rec.logFinished(code, stats, nil)
				rec.markDone()
				return
			}
		case <-deadline.C:
		}
	}
	// Hand over: stop the feeders and the sink (what they wrote is replaced
	// by the finisher), and pass the locked marker on. The finisher syncs
	// the wire log; the editor does not wait for the disk.
	if err := rec.p.CloseWireNoSync(); err != nil {
		rec.logger.Error("wire log not closed cleanly; the finisher maps what it holds", "error", err)
	}
	cancel()
	_ = rec.sink.Close()
	stats := rec.p.Snapshot()
	herr := error(nil)
	if spooled != nil {
		herr = rec.marker.HandOverSpool(stats.Sessions, *spooled)
	} else {
		herr = rec.marker.HandOver(stats.Sessions)
	}
	if err := herr; err != nil {
		rec.logger.Warn("the finisher's sessions are not recorded; a new connection waits for it whatever its session", "error", err)
	}
	var err error
	if !spawned && !rec.startStandby() {
		err = finisher.Spawn(rec.s.Self, rec.finisherArgs(rec.conn), rec.marker)
	}
	rec.marker.Release()
	if err != nil {
		rec.logger.Error("mapping not handed over; the next acptap command finishes it", "connection", rec.conn, "error", err)
	}
	rec.logger.Info("recording finished; mapping handed to a finisher", "exit_code", code, "frames", stats.Frames,
		"gap_frames", stats.GapFrames, "revision", stats.Revision, "plugins", stats.Plugins, "restarts", stats.Restarts,
		"wire_after_exit_ms", rec.wireMS, "spooled_frames", spooledFrames(spooled),
		"handed_after_exit_ms", float64(time.Since(agentGone).Microseconds())/1000)
}

func (rec *recorder) markDone() {
	if err := rec.marker.Done(); err != nil {
		rec.logger.Error("connection complete, but its pending marker stays (it will be mapped again)", "error", err)
	}
}

// finisherArgs is the command line of a finisher of what (a connection,
// or "--pending"), flags before it ("--after-parent": it maps once this
// process has exited, finisher.SpawnEarly).
func (rec *recorder) finisherArgs(what ...string) []string {
	args := append([]string(nil), rec.s.Finisher...)
	args = append(args, what[:len(what)-1]...)
	return append(append(args, "--store", rec.st.Root()), what[len(what)-1])
}

// spawnPending starts a detached finisher when the store holds a
// connection nobody maps: record never waits for one.
func (rec *recorder) spawnPending() {
	if len(rec.s.Finisher) == 0 || !finisher.Abandoned(rec.st) {
		return
	}
	if err := finisher.Spawn(rec.s.Self, rec.finisherArgs("--pending"), nil); err != nil {
		rec.logger.Error("pending connections left for the next command", "error", err)
	}
}

// sessions is what the pipeline asks the store of a session: with a marker,
// after waiting for the finishers of earlier connections of it.
func (rec *recorder) sessions() pipeline.SessionStore {
	ss := storesink.Sessions{St: rec.st, Locks: rec.locks}
	if rec.marker == nil {
		return ss
	}
	return finisher.Sessions{Sessions: ss, Conn: rec.conn, Log: rec.logger}
}

func (rec *recorder) logFinished(code int, stats pipeline.Stats, err error) {
	rec.logger.Info("recording finished", "exit_code", code, "frames", stats.Frames, "gap_frames", stats.GapFrames,
		"revision", stats.Revision, "plugins", stats.Plugins, "restarts", stats.Restarts,
		"diagnostics", rec.sink.Diagnostics(), "streams", rec.sink.Streams(), "wire_after_exit_ms", rec.wireMS)
	if err != nil {
		rec.logger.Error("recording incomplete", "error", err)
	}
}

// newConnectionID names a connection: time first, so wire logs sort.
func newConnectionID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "c-" + now.UTC().Format("20060102T150405.000Z") + "-" + hex.EncodeToString(b[:])
}

func closeQuietly(c io.Closer) {
	if c != nil {
		_ = c.Close()
	}
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }
