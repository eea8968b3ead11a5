package cli

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/acptap/acptap/host/aeprelay"
	"github.com/acptap/acptap/host/config"
	"github.com/acptap/acptap/host/otlp"
	"github.com/acptap/acptap/host/pipeline"
	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/host/tee"
	"github.com/acptap/acptap/sdk"
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
	return record(env, cfg, agent)
}

// passThrough runs the agent through the tee with nothing observing.
func passThrough(env *Env, agent []string) int {
	q := make(chan tee.Item, 1)
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

func record(env *Env, cfg *config.Config, agent []string) int {
	started := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	queue := make(chan tee.Item, cfg.Tee.QueueFrames)

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

	logger, logCloser, logErr := config.NewLogger(cfg, "acptap")
	defer closeQuietly(logCloser)
	st, err := store.Open(cfg.Store)
	var p *pipeline.Pipeline
	var sink *pipeline.StoreSink
	var outbox *aeprelay.Outbox
	var exporter *otlp.Exporter
	if err == nil && logErr == nil {
		conn := newConnectionID(started)
		cat, cerr := catalog(env, cfg)
		if cerr != nil {
			err = cerr
		} else {
			sink = pipeline.NewStoreSink(st, logger)
			outbox = attachOutbox(ctx, cfg, logger, sink)
			exporter = attachOTLP(ctx, cfg, logger, st, sink)
			p = pipeline.New(pipeline.Options{
				WirePath: st.WirePath(conn), Connection: conn, Agent: agent, Mode: sdk.ModeRecord,
				Revisions: revisions(cfg), SchemaRevision: cfg.SchemaRevision,
				DefaultRevision: pipeline.Revision(2, cfg.SchemaRevision),
				Configs:         cat.Configs, Launch: launcher(cat, logger), Sink: sink, Logger: logger, Sessions: pipeline.StoreSessions{St: st},
				BatchFrames: cfg.Tee.BatchFrames, Coalesce: cfg.Tee.Coalesce, MaxRestarts: cfg.Restart.Max, StallTimeout: cfg.Restart.StallTimeout,
			})
			logger.Info("recording", "connection", conn, "agent", agent, "wire", st.WirePath(conn))
			err = p.Start(ctx, queue)
			if err == nil {
				startShipping(env, cfg, logger)
			}
		}
	} else if logErr != nil {
		err = logErr
	}
	if err != nil {
		// Storage is broken: the session still runs; nothing is recorded.
		fmt.Fprintf(env.Stderr, "acptap: not recording: %s\n", oneLine(err))
		p = nil
		go func() {
			for it := range queue {
				it.Release()
			}
		}()
	}

	res := <-teeDone
	if res.err != nil {
		fmt.Fprintln(env.Stderr, oneLine(res.err))
	}
	if p != nil {
		stats, werr := p.Wait()
		serr := sink.Close()
		stopOutbox(outbox, cfg, logger)
		stopOTLP(exporter, cfg, logger)
		logger.Info("recording finished", "exit_code", res.code, "frames", stats.Frames, "gap_frames", stats.GapFrames,
			"revision", stats.Revision, "plugins", stats.Plugins, "restarts", stats.Restarts,
			"diagnostics", sink.Diagnostics(), "streams", sink.Streams())
		for _, e := range []error{werr, serr} {
			if e != nil {
				logger.Error("recording incomplete", "error", e)
			}
		}
	}
	return res.code
}
