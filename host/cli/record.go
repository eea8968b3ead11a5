package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/aepsender"
	"github.com/acptap/acptap/host/captured"
	"github.com/acptap/acptap/host/config"
	"github.com/acptap/acptap/host/finisher"
	"github.com/acptap/acptap/host/otlp"
	"github.com/acptap/acptap/host/pipeline"
	"github.com/acptap/acptap/host/pluginhost"
	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/host/storesink"
	"github.com/acptap/acptap/host/tee"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/aep"
)

func runRecord(env *Env, args []string) int {
	var c common
	fs := newFlagSet(env, "record", "[flags] -- AGENT [ARGS…]",
		"Runs AGENT with its stdin and stdout passed through byte for byte, captures every line to a\n"+
			"wire log, and maps the session through the plugins configured for its protocol revision.\n"+
			"Configure your editor to run this as the agent command. Exits with the agent's exit code\n"+
			"(128+n when the agent was killed by signal n; 127 when it could not be started).")
	c.register(fs)
	code, ok, err := parseFlagsBeforeCommand(fs, args)
	if err != nil {
		// The rule for what is wrong with acptap's own settings (a flag, the
		// config, the store): the editor still gets its agent, and is told
		// once on stderr that nothing is recorded. Only without an agent
		// command (after --) is there nothing to run.
		if i := slices.Index(args, "--"); i >= 0 && i+1 < len(args) {
			fmt.Fprintf(env.Stderr, "acptap record: %s; running the agent without recording\n", oneLine(err))
			return passThrough(env, args[i+1:])
		}
		fmt.Fprintf(env.Stderr, "acptap record: %s (see `acptap record --help`)\n", oneLine(err))
		return ExitUsage
	}
	if !ok {
		return code
	}
	agent := fs.Args()
	if len(agent) == 0 {
		fmt.Fprintln(env.Stderr, "acptap record: no agent command given (acptap record [flags] -- AGENT [ARGS…])")
		return ExitUsage
	}
	cfg, err := c.load()
	if err != nil {
		// Configuration errors must not stop the session: the editor still
		// gets its agent. Say so once on stderr and run capture-free.
		fmt.Fprintf(env.Stderr, "acptap record: config: %s; running the agent without recording\n", oneLine(err))
		return passThrough(env, agent)
	}
	return record(env, &c, cfg, agent)
}

// passThrough runs the agent through the tee with nothing observing.
func passThrough(env *Env, agent []string) int {
	q := make(chan captured.Item, 1)
	go func() {
		for it := range q {
			it.Release()
		}
	}()
	code, err := tee.Run(context.Background(), tee.Config{Agent: agent, Stdin: env.Stdin, Stdout: env.Stdout,
		Stderr: env.Stderr, Queue: q, Signals: true, Watchdog: watchdog(env)})
	if err != nil {
		fmt.Fprintln(env.Stderr, oneLine(err))
	}
	return code
}

// setupWait bounds how long record waits, once the agent has exited, for a
// store set-up still under way (the agent exited within milliseconds): a
// store that hangs (a dead network mount) never holds the editor.
const setupWait = 500 * time.Millisecond

// mappingGrace is how long record lets the plugins finish once capture has
// written the wire log to its end: a mapping that is caught up finishes
// within it and the connection is complete when record exits; one that is
// behind is handed to a detached finisher (host/finisher) and record exits
// with the agent at once.
const mappingGrace = 20 * time.Millisecond

func record(env *Env, c *common, cfg *config.Config, agent []string) int {
	started := time.Now()
	keepSIGPIPE()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	queue := make(chan captured.Item, cfg.Tee.QueueFrames)

	// The agent starts first: nothing below may delay its exec.
	type teeResult struct {
		code int
		err  error
	}
	teeDone := make(chan teeResult, 1)
	agentStarted := make(chan struct{})
	stdin := isolateStdin(env.Stdin)
	go func() {
		code, err := tee.Run(ctx, tee.Config{Agent: agent, Stdin: stdin, Stdout: env.Stdout,
			Stderr: env.Stderr, Queue: queue, QueueBytes: cfg.Tee.QueueBytes, Signals: true, OnStart: func(int) { close(agentStarted) },
			Watchdog: watchdog(env)})
		teeDone <- teeResult{code, err}
	}()
	// Nothing is set up for an agent that could not be started: no wire
	// log, no plugins.
	select {
	case <-agentStarted:
	case res := <-teeDone:
		if res.err != nil {
			fmt.Fprintln(env.Stderr, oneLine(res.err))
		}
		return res.code
	}

	// Set-up runs beside the tee, never on its exit path: the log file is
	// opened in the background (it may be a FIFO), and a store that hangs is
	// abandoned after setupWait.
	setupDone := make(chan *recorder, 1)
	go func() { setupDone <- setUp(ctx, env, c, cfg, agent, started, queue) }()

	guard := guardFinish()
	defer guard.stop()
	res := <-teeDone
	guard.agentExited(res.code)
	if res.err != nil {
		fmt.Fprintln(env.Stderr, oneLine(res.err))
	}
	// Every byte of the agent is forwarded: the editor sees EOF now, not
	// when acptap has finished.
	closeStdout(env.Stdout)
	var r *recorder
	select {
	case r = <-setupDone:
	case <-time.After(setupWait):
		fmt.Fprintf(env.Stderr, "acptap: not recorded: the store was not set up within %s of the agent's exit\n", setupWait)
		return res.code
	}
	if r != nil {
		r.finish(ctx, cancel, res.code)
	}
	return res.code
}

// recorder is a recording's set-up: the pipeline and what it writes to.
type recorder struct {
	env       *Env
	c         *common
	cfg       *config.Config
	logger    hclog.Logger
	logCloser io.Closer
	st        *store.Store
	conn      string
	p         *pipeline.Pipeline
	sink      *storesink.Sink
	outbox    *aepsender.Outbox
	exporter  *otlp.Exporter      // OTLP export: with it, record maps to the end itself
	marker    *finisher.Marker    // nil: no finisher can take over; record maps to the end
	wireMS    float64             // agent exited → wire log complete, in ms
	locks     *store.SessionLocks // one writer process per session (issue 18.6)
}

// setUp opens the log, the store and the wire log and starts the pipeline
// on the tee's queue. nil: nothing is recorded (said on stderr), and the
// queue is drained.
func setUp(ctx context.Context, env *Env, c *common, cfg *config.Config, agent []string, started time.Time, queue chan captured.Item) *recorder {
	r := &recorder{env: env, c: c, cfg: cfg, conn: newConnectionID(started)}
	logger, logCloser, err := config.NewLoggerAsync(cfg, "acptap", func(err error) {
		fmt.Fprintf(env.Stderr, "acptap: log: %s\n", oneLine(err))
	})
	if err == nil {
		r.logger, r.logCloser = logger, logCloser
		r.st, err = store.Open(cfg.Store)
	}
	var cat *pluginhost.Catalog
	if err == nil {
		cat, err = catalog(env, cfg)
	}
	if err == nil {
		// The marker comes before the wire log: a connection killed between
		// the two has a marker without a log, which the next command drops.
		var merr error
		if r.marker, merr = finisher.Create(r.st, r.conn); merr != nil {
			r.logger.Warn("no finisher can take this connection over; record maps it to the end before exiting", "error", merr)
		}
		r.sink = storesink.New(r.st, r.logger)
		r.locks = r.st.Locks() // one writer process per session at a time
		r.sink.Locks = r.locks
		r.outbox = attachOutbox(ctx, cfg, r.logger, r.sink)
		r.exporter = attachOTLP(ctx, cfg, r.logger, r.st, r.sink)
		r.p = pipeline.New(pipeline.Options{
			WirePath: r.st.WirePath(r.conn), Connection: r.conn, Agent: agent, Mode: sdk.ModeRecord,
			Revisions: revisions(cfg), SchemaRevision: cfg.SchemaRevision,
			DefaultRevision: pipeline.Revision(2, cfg.SchemaRevision),
			Configs:         cat.Configs, Launch: launcherWith(cat, r.logger, pluginhost.LaunchBackground), Sink: r.sink, Logger: r.logger, Sessions: r.sessions(),
			BatchFrames: cfg.Tee.BatchFrames, Coalesce: cfg.Tee.Coalesce, MaxRestarts: cfg.Restart.Max, StallTimeout: cfg.Restart.StallTimeout,
			Routing: routing(cfg, cat, r.logger, agent),
		})
		r.logger.Info("recording", "connection", r.conn, "agent", aep.RedactArgv(agent), "wire", r.st.WirePath(r.conn))
		if err = r.p.Start(ctx, queue); err != nil && r.marker != nil {
			_ = r.marker.Done()
		}
	}
	if err != nil {
		// Storage is broken: the session still runs; nothing is recorded.
		fmt.Fprintf(env.Stderr, "acptap: not recording: %s\n", oneLine(err))
		closeQuietly(r.logCloser)
		go func() {
			for it := range queue {
				it.Release()
			}
		}()
		return nil
	}
	startShipping(env, cfg, r.logger)
	spawnPendingFinisher(env, c, r.st, r.logger)
	return r
}

// finish ends the recording once the agent has exited: capture writes the
// wire log to its end; a mapping that finishes within mappingGrace
// completes the connection here; otherwise the connection goes to a
// detached finisher and record returns at once, whatever the backlog or a
// hung plugin.
func (r *recorder) finish(ctx context.Context, cancel context.CancelFunc, code int) {
	defer closeQuietly(r.logCloser)
	agentGone := time.Now()
	<-r.p.CaptureDone()
	// How long capture took to write what the tee had queued when the agent
	// exited: the part of acptap's exit that is not mapping.
	r.wireMS = float64(time.Since(agentGone).Microseconds()) / 1000
	// OTLP export is not handed over (the finisher would export again what
	// the foreground exported live, and spans close at the end of the
	// mapping): with it configured, record maps to the end as before.
	if r.marker == nil || r.exporter != nil {
		wireErr := r.p.CloseWire()
		stats, werr := r.p.Wait()
		serr := r.sink.Close()
		stopOutbox(r.outbox, r.cfg, r.logger)
		stopOTLP(r.exporter, r.cfg, r.logger)
		r.logFinished(code, stats, errors.Join(wireErr, werr, serr))
		if r.marker != nil {
			if err := r.marker.Done(); err != nil {
				r.logger.Error("connection complete, but its pending marker stays (it will be mapped again)", "error", err)
			}
		}
		return
	}
	// A mapping that is caught up finishes within the grace; one whose
	// feeders are catching up from the wire log does not: it is handed
	// over at once.
	if !r.p.Behind() {
		deadline := time.NewTimer(mappingGrace)
		defer deadline.Stop()
		select {
		case <-r.p.Mapped():
			// The plugins are not waited for: they die with acptap.
			wireErr := r.p.CloseWire()
			stats := r.p.Snapshot()
			serr := r.sink.Close()
			if err := errors.Join(wireErr, serr); err == nil && r.outboxDrained(deadline.C) {
				r.logFinished(code, stats, nil)
				if err := r.marker.Done(); err != nil {
					r.logger.Error("connection complete, but its pending marker stays (it will be mapped again)", "error", err)
				}
				return
			}
		case <-deadline.C:
		}
	}
	// Hand over: stop the feeders and the sink (what they wrote is replaced
	// by the finisher), and pass the locked marker on. The finisher syncs
	// the wire log; the editor does not wait for the disk.
	if err := r.p.CloseWireNoSync(); err != nil {
		r.logger.Error("wire log not closed cleanly; the finisher maps what it holds", "error", err)
	}
	cancel()
	_ = r.sink.Close()
	stats := r.p.Snapshot()
	if err := r.marker.HandOver(stats.Sessions); err != nil {
		r.logger.Warn("the finisher's sessions are not recorded; a new connection waits for it whatever its session", "error", err)
	}
	args := append(append([]string{hiddenFinish}, r.c.args()...), "--store", r.st.Root(), r.conn)
	err := finisher.Spawn(r.env.Self, args, r.marker)
	r.marker.Release()
	if err != nil {
		r.logger.Error("mapping not handed over; the next acptap command finishes it", "connection", r.conn, "error", err)
	}
	r.logger.Info("recording finished; mapping handed to a finisher", "exit_code", code, "frames", stats.Frames,
		"gap_frames", stats.GapFrames, "revision", stats.Revision, "plugins", stats.Plugins, "restarts", stats.Restarts,
		"wire_after_exit_ms", r.wireMS, "handed_after_exit_ms", float64(time.Since(agentGone).Microseconds())/1000)
}

// sessions is what the pipeline asks the store of a session: with a marker,
// after waiting for the finishers of earlier connections of it.
func (r *recorder) sessions() pipeline.SessionStore {
	ss := storesink.Sessions{St: r.st, Locks: r.locks}
	if r.marker == nil {
		return ss
	}
	return finisher.Sessions{Sessions: ss, Conn: r.conn, Log: r.logger}
}

// outboxDrained gives the relay outbox until done to deliver what it holds;
// false: some event was not delivered (the finisher sends them again, the
// relay drops the duplicates).
func (r *recorder) outboxDrained(done <-chan time.Time) bool {
	if r.outbox == nil {
		return true
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-done:
			cancel()
		case <-ctx.Done():
		}
	}()
	s, _ := r.outbox.Shutdown(ctx)
	if s.Lost() > 0 {
		r.logger.Debug("aep relay outbox not drained in time; the finisher sends the events again", "unsent", s.Unsent)
		return false
	}
	logOutbox(s, r.cfg, r.logger)
	return true
}

func (r *recorder) logFinished(code int, stats pipeline.Stats, err error) {
	r.logger.Info("recording finished", "exit_code", code, "frames", stats.Frames, "gap_frames", stats.GapFrames,
		"revision", stats.Revision, "plugins", stats.Plugins, "restarts", stats.Restarts,
		"diagnostics", r.sink.Diagnostics(), "streams", r.sink.Streams(), "wire_after_exit_ms", r.wireMS)
	if err != nil {
		r.logger.Error("recording incomplete", "error", err)
	}
}

// closeStdout closes the process's stdout once the tee has forwarded the
// agent's last byte (nothing else writes it).
func closeStdout(w io.Writer) {
	if f, ok := w.(*os.File); ok && f == os.Stdout {
		_ = f.Close()
	}
}
