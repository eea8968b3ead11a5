package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/acptap/acptap/host/filekind"
	"github.com/acptap/acptap/host/logimport"
	"github.com/acptap/acptap/host/recording"
)

func runConvert(env *Env, args []string) int {
	var c common
	var from string
	var force bool
	fs := newFlagSet(env, "convert", "--from acp-v1-log [flags] LOG…",
		"Converts stored logs into the store: each LOG (a file, gzip or plain; - for standard input)\n"+
			"becomes a wire log, <store>/wire/v1-<first 12 hex digits of its SHA-256>.jsonl, which is\n"+
			"mapped through the plugins configured for the revision acp-v1-log, as a recording would be.\n"+
			"An acp-v1-log is an acptap wire log of an ACP v1 connection, a trace (JSONL of\n"+
			"{\"dir\":\"send\"|\"recv\",\"line\":…}), JSONL of ACP v1 JSON-RPC messages, or JSONL of bare\n"+
			"session/update params; see docs/convert.md. Lines that are not JSON or not ACP are skipped\n"+
			"and reported by line number; they are not failures. A LOG converted before is skipped\n"+
			"unless --force is given. Exits 1 if a LOG could not be read or converted, or a plugin could\n"+
			"not map it completely; 2 on bad usage.")
	c.register(fs)
	fs.StringVar(&from, "from", "", "what the LOGs are: "+strings.Join(logimport.Froms, ", ")+" (required)")
	maxLine := registerMaxLine(fs)
	fs.BoolVar(&force, "force", false, "convert a LOG again although its wire log exists; the files it rewrites are kept as <file>.prev-<unix-nanoseconds>")
	inputs, code, ok := parseInterspersed(fs, args)
	if !ok {
		return code
	}
	switch {
	case from == "":
		fmt.Fprintf(env.Stderr, "acptap convert: --from is required (supported: %s)\n", strings.Join(logimport.Froms, ", "))
		return ExitUsage
	case !slices.Contains(logimport.Froms, from):
		fmt.Fprintf(env.Stderr, "acptap convert: --from %q is not supported (supported: %s)\n", from, strings.Join(logimport.Froms, ", "))
		return ExitUsage
	case len(inputs) == 0:
		fmt.Fprintln(env.Stderr, "acptap convert: no LOG given")
		return ExitUsage
	}
	if n := slices.Index(inputs, "-"); n >= 0 && slices.Index(inputs[n+1:], "-") >= 0 {
		fmt.Fprintln(env.Stderr, "acptap convert: - (standard input) may be given once")
		return ExitUsage
	}
	m, err := openMapping(env, &c)
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap convert: %s\n", oneLine(err))
		return ExitFailure
	}
	defer m.close()
	st, logger := m.st, m.logger
	finishPendingQuietly(env, m.cfg, st)
	if len(recording.Revisions(m.cfg)[from]) == 0 {
		fmt.Fprintf(env.Stderr, "acptap convert: no plugins are configured for the revision %q: the wire logs are written, nothing is mapped\n", from)
	}

	// The first interrupt stops reading; what was read is still mapped.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // a second interrupt kills
	}()
	opts := logimport.Options{Store: st, From: from, Force: force, Stdin: env.Stdin, MaxLine: *maxLine, Pipeline: m.plugins.Import(from)}
	var bar *progressBar
	if isTerminal(env.Stderr) {
		opts.Progress = &logimport.Progress{}
		bar = startProgress(env.Stderr, opts.Progress)
	}

	code = ExitOK
	var total logimport.Totals
	for _, in := range inputs {
		if ctx.Err() != nil {
			break
		}
		if in != "-" {
			if err := notKind(in, filekind.ACPLog); err != nil {
				fmt.Fprintf(env.Stderr, "acptap convert: %s\n", oneLine(err))
				code = ExitFailure
				total.Fail()
				continue
			}
		}
		logger.Info("convert", "input", in, "from", from, "force", force)
		bar.resume()
		res, err := logimport.Convert(ctx, in, opts)
		bar.pause()
		switch {
		case err != nil && res != nil && res.Wrote:
			// Read in part: what was read is in the store.
			res.WriteSummary(env.Stdout, st.Root())
			fmt.Fprintf(env.Stderr, "acptap convert: %s\n", convertError(err))
			code = ExitFailure
		case err != nil:
			fmt.Fprintf(env.Stderr, "acptap convert: %s\n", convertError(err))
			code = ExitFailure
			total.Fail()
			continue
		case res.Interrupted && !res.Wrote:
			fmt.Fprintf(env.Stderr, "acptap convert: interrupted before %s was converted; nothing was written for it\n", in)
			code = ExitInterrupt
			continue
		default:
			res.WriteSummary(env.Stdout, st.Root())
		}
		total.Add(res)
		if res.MappingErr != nil {
			fmt.Fprintf(env.Stderr, "acptap convert: %s: %s\n", in, oneLine(res.MappingErr))
			code = ExitFailure
		}
		if res.Interrupted {
			fmt.Fprintf(env.Stderr, "acptap convert: interrupted after line %d of %s: its wire log holds what was read; "+
				"convert it again with --force to finish\n", res.Lines, in)
			code = ExitInterrupt
		}
	}
	bar.stop()
	if len(inputs) > 1 {
		total.Print(env.Stdout)
	}
	return code
}

// convertError words a conversion error for stderr ("LOG: why").
func convertError(err error) string {
	return strings.TrimPrefix(oneLine(err), logimport.ErrNotReadable.Error()+": ")
}
