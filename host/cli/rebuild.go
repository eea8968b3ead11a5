package cli

import (
	"context"
	"fmt"
	"github.com/acptap/acptap/host/filekind"
	"path/filepath"
	"strings"

	"github.com/acptap/acptap/host/pipeline"
	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/sdk"
)

func runRebuild(env *Env, args []string) int {
	var c common
	fs := newFlagSet(env, "rebuild", "[flags] WIRE.jsonl…",
		"Maps wire logs through the plugins again and writes the outputs a live run would have\n"+
			"written: the same frames give the same records, byte for byte (timestamps come from each\n"+
			"frame's receipt time). A stream that already exists in the store is replaced; the old file\n"+
			"is kept beside it as <file>.prev-<unix-nanoseconds>. Exits 1 if a wire log cannot be read or\n"+
			"a plugin could not map it completely.")
	c.register(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(env.Stderr, "acptap rebuild: no wire log given")
		return ExitUsage
	}
	cfg, err := c.load()
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap rebuild: %s\n", oneLine(err))
		return ExitFailure
	}
	logger, logCloser, err := newCommandLogger(cfg)
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap rebuild: %s\n", oneLine(err))
		return ExitFailure
	}
	defer closeQuietly(logCloser)
	st, err := store.Open(cfg.Store)
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap rebuild: %s\n", oneLine(err))
		return ExitFailure
	}
	cat, err := catalog(env, cfg)
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap rebuild: %s\n", oneLine(err))
		return ExitFailure
	}
	code := ExitOK
	for _, path := range fs.Args() {
		if err := notKind(path, filekind.Wire); err != nil {
			fmt.Fprintf(env.Stderr, "acptap rebuild: %s\n", oneLine(err))
			code = ExitFailure
			continue
		}
		r, err := wire.Open(path)
		if err != nil {
			fmt.Fprintf(env.Stderr, "acptap rebuild: %s\n", oneLine(err))
			code = ExitFailure
			continue
		}
		hdr := r.Header()
		r.Close()
		sink := pipeline.NewStoreSink(st, logger)
		sink.ReplaceExisting = true
		p := pipeline.New(pipeline.Options{
			WirePath: path, Connection: hdr.Connection, Agent: hdr.Agent.Command, Mode: sdk.ModeRebuild,
			Revisions: revisions(cfg), SchemaRevision: cfg.SchemaRevision,
			DefaultRevision: pipeline.Revision(2, cfg.SchemaRevision),
			Configs:         cat.Configs, Launch: launcher(cat, logger), Sink: sink, Logger: logger, Sessions: pipeline.StoreSessions{St: st},
			BatchFrames: cfg.Tee.BatchFrames, MaxRestarts: cfg.Restart.Max, StallTimeout: cfg.Restart.StallTimeout,
		})
		if err := p.Rebuild(context.Background()); err != nil {
			fmt.Fprintf(env.Stderr, "acptap rebuild: %s: %s\n", path, oneLine(err))
			code = ExitFailure
			continue
		}
		stats, werr := p.Wait()
		serr := sink.Close()
		counts := sink.Counts()
		fmt.Fprintf(env.Stdout, "%s: revision %s, %d frames → %d ASR records in %d files, %d AEP events",
			filepath.Base(path), stats.Revision, stats.Frames, counts[sdk.ASRRecord.String()]+counts[sdk.ASRHeader.String()],
			len(sink.Streams()), counts[sdk.AEPEvent.String()])
		if d := sink.Diagnostics(); len(d) > 0 {
			fmt.Fprintf(env.Stdout, ", diagnostics %v", d)
		}
		fmt.Fprintln(env.Stdout)
		for _, s := range sink.Streams() {
			fmt.Fprintf(env.Stdout, "  %s\n", s)
		}
		for _, b := range sink.Replaced() {
			fmt.Fprintf(env.Stdout, "  (previous file kept as %s)\n", b)
		}
		if werr != nil || serr != nil || sink.GaveUp() {
			msgs := []string{}
			for _, e := range []error{werr, serr} {
				if e != nil {
					msgs = append(msgs, oneLine(e))
				}
			}
			if sink.GaveUp() {
				msgs = append(msgs, "a plugin gave up before the end of the wire log (see the log)")
			}
			fmt.Fprintf(env.Stderr, "acptap rebuild: %s: %s\n", path, strings.Join(msgs, "; "))
			code = ExitFailure
		}
	}
	return code
}
