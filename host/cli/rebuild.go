package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	isatty "github.com/mattn/go-isatty"

	"github.com/acptap/acptap/host/filekind"
	"github.com/acptap/acptap/host/rebuild"
)

func runRebuild(env *Env, args []string) int {
	var c common
	var all bool
	var sessions stringList
	fs := newFlagSet(env, "rebuild", "[flags] WIRE.jsonl… | --all [--session ID]",
		"Re-derives sessions from their wire logs with the current plugins and config: a session's\n"+
			"outputs are a function of the wire logs that observed it, in connection order (header\n"+
			"startedAt, then connection id). Each connection continues what the earlier ones produced\n"+
			"in this rebuild, as a live run would have; a stale session entry is reported, not obeyed.\n"+
			"WIRE.jsonl… rebuilds the sessions those logs name, with every other connection of theirs the\n"+
			"store holds (a log from outside <store>/wire is copied in); --all rebuilds every session named\n"+
			"under <store>/wire. The new outputs are built beside the old ones and swapped in only when\n"+
			"every connection mapped; a changed file is kept as <file>.prev-<unix-nanoseconds>. Exits 1\n"+
			"if a wire log line was skipped, a session could not be rebuilt, or a plugin could not map.")
	c.register(fs)
	fs.BoolVar(&all, "all", false, "rebuild every session of the store from <store>/wire")
	fs.Var(&sessions, "session", "with --all: rebuild only this session (repeatable)")
	pending := fs.Bool("pending", false, "first finish the connections of the store whose mapping never finished (a finisher killed, the machine off)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if !all && fs.NArg() == 0 && !*pending {
		fmt.Fprintln(env.Stderr, "acptap rebuild: no wire log given")
		return ExitUsage
	}
	if all && fs.NArg() > 0 {
		fmt.Fprintln(env.Stderr, "acptap rebuild: give wire logs or --all, not both")
		return ExitUsage
	}
	if len(sessions) > 0 && !all {
		fmt.Fprintln(env.Stderr, "acptap rebuild: --session goes with --all")
		return ExitUsage
	}
	offlineGC() // offline_gc.go
	m, err := openMapping(env, &c)
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap rebuild: %s\n", oneLine(err))
		return ExitFailure
	}
	defer m.close()
	code := rebuildPending(env, m.cfg, m.st, m.logger, *pending)
	if !all && fs.NArg() == 0 {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts := rebuild.Options{Store: m.st, Out: env.Stdout, Err: env.Stderr, Pipeline: m.plugins.Template(), Routing: m.plugins.Routing}
	if f, ok := env.Stderr.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
		opts.Progress = env.Stderr
	}
	for _, path := range fs.Args() {
		if err := notKind(path, filekind.Wire); err != nil {
			fmt.Fprintf(env.Stderr, "acptap rebuild: %s\n", oneLine(err))
			return ExitFailure
		}
	}
	res, err := rebuild.Run(ctx, opts, rebuild.Request{All: all, Sessions: sessions, Files: fs.Args()})
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap rebuild: %s\n", oneLine(err))
		if errors.Is(err, context.Canceled) {
			return ExitInterrupt
		}
		return ExitFailure
	}
	if res.Failed {
		return ExitFailure
	}
	return code
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string { return fmt.Sprint([]string(*l)) }

func (l *stringList) Set(s string) error {
	*l = append(*l, s)
	return nil
}
