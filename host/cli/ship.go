package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/config"
	"github.com/acptap/acptap/host/ship"
	"github.com/acptap/acptap/host/store"
)

func runShip(env *Env, args []string) int {
	var c common
	var all bool
	var parent int
	fs := newFlagSet(env, "ship", "[flags]",
		"Publishes every line of the store's outputs (ASR streams, other plugins' streams, AEP files;\n"+
			"wire logs with ship.nats.wire) that is not on the team store's NATS JetStream server yet,\n"+
			"one subject per origin and file ([ship.nats] in the config). Resends are no-ops on the\n"+
			"server. A cursor per output (<store>/ship/nats/) remembers how far each is shipped.\n"+
			"Exits 1 when the server cannot be reached or a line could not be shipped.")
	fs.BoolVar(&all, "all", false, "forget the local cursors and check every output against the server")
	fs.IntVar(&parent, "follow", 0, "(internal) ship while process PID runs, then until nothing is left")
	c.register(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "acptap ship: unexpected arguments %q\n", fs.Args())
		return ExitUsage
	}
	cfg, err := c.load()
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap ship: config: %s\n", oneLine(err))
		return ExitFailure
	}
	if cfg.Ship.NATS.URL == "" {
		fmt.Fprintf(env.Stderr, "acptap ship: %s\n", ship.ErrOff)
		return ExitFailure
	}
	logger, closer, err := config.NewLogger(cfg, "acptap")
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap ship: %s\n", oneLine(err))
		return ExitFailure
	}
	defer closeQuietly(closer)
	logger = logger.Named("ship")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if parent > 0 {
		followShip(ctx, cfg, logger, parent)
		return ExitOK
	}
	sh, err := newShipper(ctx, cfg, logger)
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap ship: %s\n", oneLine(err))
		return ExitFailure
	}
	defer sh.Conn.Close()
	if all {
		if err := os.Remove(sh.CursorPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(env.Stderr, "acptap ship: %s\n", oneLine(err))
			return ExitFailure
		}
	}
	st, err := sh.Pass(ctx)
	fmt.Fprintf(env.Stderr, "acptap ship: %d outputs, %d lines (%d bytes) in %d messages to %s as %q; %d resynchronised from the server, %d already there, %d rewritten outputs shipped as a new generation\n",
		st.Files, st.Lines, st.Bytes, st.Messages, cfg.Ship.NATS.Stream, sh.Origin, st.Resyncs, st.Duplicates, st.NewGens)
	for _, s := range st.Stuck {
		fmt.Fprintf(env.Stderr, "acptap ship: %s\n", s)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap ship: stopped: %s (the rest ships on the next run)\n", oneLine(err))
		return ExitFailure
	}
	if len(st.Stuck) > 0 {
		return ExitFailure
	}
	return ExitOK
}

func newShipper(ctx context.Context, cfg *config.Config, logger hclog.Logger) (*ship.Shipper, error) {
	origin, err := ship.Origin(cfg.Ship.NATS)
	if err != nil {
		return nil, fmt.Errorf("ship.nats.origin: %w", err)
	}
	conn, err := ship.Connect(ctx, cfg.Ship.NATS, "acptap ship "+origin)
	if err != nil {
		return nil, err
	}
	return &ship.Shipper{Root: cfg.Store, Origin: origin, Prefix: cfg.Ship.NATS.Subject, Wire: cfg.Ship.NATS.Wire,
		Log: logger, Conn: conn}, nil
}

func followShip(ctx context.Context, cfg *config.Config, logger hclog.Logger, parent int) {
	var failures int
	defer func() { logger.Info("shipper done", "recording", parent) }()
	ship.Follow(ctx, ship.FollowOptions{
		Interval: cfg.Ship.NATS.Interval, Parent: parent, Linger: cfg.Ship.NATS.Linger, Busy: finishing(cfg),
		Connect: func(ctx context.Context) (*ship.Shipper, error) { return newShipper(ctx, cfg, logger) },
		Report: func(st ship.Stats, err error) {
			if err != nil {
				// Said once per outage, not once per interval.
				if failures++; failures == 1 {
					logger.Warn("cannot ship; retrying", "error", err)
				}
				return
			}
			if failures > 0 {
				logger.Info("shipping again", "failed_passes", failures)
				failures = 0
			}
			if st.Lines > 0 {
				logger.Debug("shipped", "lines", st.Lines, "messages", st.Messages, "resyncs", st.Resyncs)
			}
			for _, s := range st.Stuck {
				logger.Error("cannot ship line", "where", s)
			}
		},
	})
}

// startShipping starts, when [ship.nats] is configured, a shipper process
// of its own for the store: it follows this recording and, once it is over,
// ships what is left and exits. record never waits for it; its failures go
// to the log.
func startShipping(env *Env, cfg *config.Config, logger hclog.Logger) {
	if cfg.Ship.NATS.URL == "" {
		return
	}
	args := []string{"ship", "--follow", strconv.Itoa(os.Getpid()), "--store", cfg.Store, "--log-level", cfg.Log.Level}
	if cfg.File != "" {
		args = append(args, "--config", cfg.File)
	}
	if cfg.Log.Stderr {
		args = append(args, "--log-file", store.LogPath(cfg.Store))
	} else {
		args = append(args, "--log-file", cfg.Log.File)
	}
	cmd := exec.Command(env.Self, args...)
	// Its own session: the editor's signals to the agent's group and the
	// terminal's hang-up do not reach it; stdio closed so it holds no pipe
	// of the editor's.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		logger.Error("cannot start the shipper", "error", err)
		return
	}
	logger.Info("shipping to the team store", "pid", cmd.Process.Pid, "url", cfg.Ship.NATS.URL)
	go cmd.Wait() //nolint:errcheck // reaped if it ends before we do
}

func runCollect(env *Env, args []string) int {
	var c common
	var once bool
	fs := newFlagSet(env, "collect", "[flags]",
		"Reads the team store's NATS JetStream stream through a durable consumer (ship.nats.durable)\n"+
			"and writes every origin's outputs into the store given by --store: <store>/<origin>/ with the\n"+
			"local layout, each file byte-identical to the origin's. A line is written (and synced) only\n"+
			"after the one before it, then acknowledged; a restart resumes where the consumer stands.\n"+
			"Several collectors may share one durable consumer and one store. Runs until SIGINT or SIGTERM.")
	fs.BoolVar(&once, "once", false, "stop when every message the consumer has is written")
	c.register(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "acptap collect: unexpected arguments %q\n", fs.Args())
		return ExitUsage
	}
	cfg, err := c.load()
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap collect: config: %s\n", oneLine(err))
		return ExitFailure
	}
	if cfg.Ship.NATS.URL == "" {
		fmt.Fprintf(env.Stderr, "acptap collect: %s\n", ship.ErrOff)
		return ExitFailure
	}
	logger, closer, err := config.NewLogger(cfg, "acptap")
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap collect: %s\n", oneLine(err))
		return ExitFailure
	}
	defer closeQuietly(closer)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	conn, err := ship.Connect(ctx, cfg.Ship.NATS, "acptap collect")
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap collect: %s\n", oneLine(err))
		return ExitFailure
	}
	defer conn.Close()
	col := &ship.Collector{Root: cfg.Store, Prefix: cfg.Ship.NATS.Subject, Durable: cfg.Ship.NATS.Durable,
		Conn: conn, Log: logger.Named("collect"), AckWait: cfg.Ship.NATS.AckWait}
	fmt.Fprintf(env.Stderr, "acptap collect: %s (stream %s, consumer %s) into %s\n", cfg.Ship.NATS.URL,
		cfg.Ship.NATS.Stream, cfg.Ship.NATS.Durable, cfg.Store)
	if once {
		err = col.RunUntilCaughtUp(ctx)
	} else {
		err = col.Run(ctx)
	}
	s := col.Stats()
	fmt.Fprintf(env.Stderr, "acptap collect: %d messages, %d lines (%d bytes) written; %d duplicates, %d early and %d busy delivered again, %d outputs rotated to a new generation, %d stale, %d rejected\n",
		s["messages"], s["lines"], s["bytes"], s["duplicates"], s["early"], s["busy"], s["rotated"], s["stale"], s["rejected"])
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap collect: %s\n", oneLine(err))
		return ExitFailure
	}
	return ExitOK
}
