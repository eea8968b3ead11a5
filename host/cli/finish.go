package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/config"
	"github.com/acptap/acptap/host/finisher"
	"github.com/acptap/acptap/host/recording"
	"github.com/acptap/acptap/host/store"
)

// hiddenFinish is the subcommand of the detached finisher record hands a
// connection to (host/finisher): `__finish [flags] CONNECTION` with the
// connection's locked marker on fd 3, or `__finish [flags] --pending` for
// every abandoned connection.
const hiddenFinish = "__finish"

// args are the flags that give a finisher the same store, config and log as
// this command.
func (c *common) args() []string {
	var a []string
	for _, kv := range [][2]string{{"store", c.store}, {"config", c.config}, {"log-file", c.logFile}, {"log-level", c.logLevel}} {
		if kv[1] != "" {
			a = append(a, "--"+kv[0], kv[1])
		}
	}
	if c.logStderr {
		a = append(a, "--log-stderr")
	}
	return a
}

// finisherOptions are the options a finisher maps with (host/recording).
func finisherOptions(ctx context.Context, env *Env, cfg *config.Config, st *store.Store, logger hclog.Logger) (finisher.Options, error) {
	plugins, err := recording.NewPlugins(cfg, env.Self, logger)
	if err != nil {
		return finisher.Options{}, err
	}
	return recording.FinisherOptions(ctx, cfg, plugins, st, logger), nil
}

// finishPending completes the connections of the store whose mapping never
// finished (a finisher killed, the machine off), and waits for those a
// running finisher holds, so that the command sees every output. Every
// command that opens the store calls it, except record, which must not
// wait: it starts a detached finisher instead (spawnPendingFinisher).
func finishPending(ctx context.Context, env *Env, cfg *config.Config, st *store.Store, logger hclog.Logger) ([]finisher.Result, error) {
	conns, err := finisher.Pending(st)
	if err != nil || len(conns) == 0 {
		return nil, err
	}
	o, err := finisherOptions(ctx, env, cfg, st, logger)
	if err != nil {
		return nil, err
	}
	return finisher.CompleteAll(ctx, o, true)
}

// finishPendingQuietly is finishPending for commands whose output is not a
// report of it: a failure is one line on stderr; the command goes on.
func finishPendingQuietly(env *Env, cfg *config.Config, st *store.Store) {
	logger, closer, err := newCommandLogger(cfg)
	if err != nil {
		logger = hclog.NewNullLogger()
	}
	defer closeQuietly(closer)
	if _, err := finishPending(context.Background(), env, cfg, st, logger); err != nil {
		fmt.Fprintf(env.Stderr, "acptap: pending connections not finished: %s\n", oneLine(err))
	}
}

// runFinish is the detached finisher.
func runFinish(env *Env, args []string) int {
	var c common
	var pending bool
	fs := flag.NewFlagSet(hiddenFinish, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	c.register(fs)
	fs.BoolVar(&pending, "pending", false, "finish every abandoned connection")
	var afterParent, spool, arena bool
	fs.BoolVar(&spool, "spool", false, "the recording's unwritten capture is on descriptor 5 (finisher.SpoolFD)")
	fs.BoolVar(&arena, "arena", false, "with --spool: the recording's queue arena is on descriptor 6 (finisher.ArenaFD)")
	fs.BoolVar(&afterParent, "after-parent", false, "start mapping once the recording that started this finisher let go of the connection or exited (finisher.SpawnEarly)")
	if err := fs.Parse(args); err != nil || (!pending && fs.NArg() != 1) {
		fmt.Fprintf(env.Stderr, "acptap %s: [flags] (CONNECTION | --pending)\n", hiddenFinish)
		return ExitUsage
	}
	var inherited, spoolFile *os.File
	var arenaMem []byte
	var arenaErr error
	if !pending {
		inherited = finisher.Inherited()
		if spool {
			spoolFile = finisher.InheritedSpool()
			if arena {
				arenaMem, arenaErr = finisher.InheritedArena()
			}
		}
	}
	cfg, err := c.load()
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap %s: %s\n", hiddenFinish, oneLine(err))
		return ExitFailure
	}
	// Like record, the finisher never waits on its log file (it may be a
	// FIFO): it would hold the connection's lock for ever.
	logger, closer, err := config.NewLoggerAsync(cfg, "acptap", nil)
	if err != nil {
		return ExitFailure // stderr is /dev/null here
	}
	defer closeQuietly(closer)
	logger = logger.Named("finisher")
	if arenaErr != nil {
		// The spool's records of chunks in the arena then fail to read: declared as gaps.
		logger.Error("queue arena not mapped", "error", arenaErr)
	}
	if err := finisher.LowerPriority(); err != nil {
		logger.Warn("finisher runs at the normal CPU priority", "error", err)
	}
	if afterParent && !pending {
		if err := finisher.WaitParent(); err != nil {
			logger.Warn("finisher", "error", err)
		}
	}
	st, err := store.Open(cfg.Store)
	if err != nil {
		logger.Error("store", "error", err)
		return ExitFailure
	}
	ctx := context.Background()
	o, err := finisherOptions(ctx, env, cfg, st, logger)
	if err != nil {
		logger.Error("plugins", "error", err)
		return ExitFailure
	}
	o.Spool, o.Arena = spoolFile, arenaMem
	if pending {
		if _, err := finisher.CompleteAll(ctx, o, false); err != nil {
			logger.Error("pending connections not finished", "error", strings.ReplaceAll(err.Error(), "\n", "; "))
			return ExitFailure
		}
		return ExitOK
	}
	m, err := finisher.Adopt(st, fs.Arg(0), inherited)
	if errors.Is(err, finisher.ErrMarkerGone) && afterParent {
		logger.Debug("the recording completed its connection; nothing to finish", "connection", fs.Arg(0))
		return ExitOK
	}
	if err != nil {
		logger.Error("finisher", "error", err)
		return ExitFailure
	}
	if _, err := finisher.Complete(ctx, o, m); err != nil {
		logger.Error("connection not finished; left pending", "error", err)
		return ExitFailure
	}
	return ExitOK
}

// rebuildPending finishes the store's pending connections for rebuild;
// with report (--pending) it lists them on stdout.
func rebuildPending(env *Env, cfg *config.Config, st *store.Store, logger hclog.Logger, report bool) int {
	results, err := finishPending(context.Background(), env, cfg, st, logger)
	if report {
		for _, r := range results {
			if r.Synced {
				fmt.Fprintf(env.Stdout, "%s: finished (mapped by its recording; wire log synced)\n", r.Conn)
				continue
			}
			fmt.Fprintf(env.Stdout, "%s: finished, revision %s, %d frames → %d files\n", r.Conn, r.Stats.Revision, r.Stats.Frames, len(r.Streams))
			for _, s := range r.Streams {
				fmt.Fprintf(env.Stdout, "  %s\n", s)
			}
		}
		if len(results) == 0 && err == nil {
			fmt.Fprintln(env.Stdout, "no pending connections")
		}
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap rebuild: pending connections: %s\n", oneLine(err))
		return ExitFailure
	}
	return ExitOK
}

// finishing reports whether the store has a connection still being mapped
// (the shipper follows a finisher as it follows record).
func finishing(cfg *config.Config) func() bool {
	return func() bool {
		st, err := store.Open(cfg.Store)
		if err != nil {
			return false
		}
		conns, err := finisher.Pending(st)
		return err == nil && len(conns) > 0
	}
}
