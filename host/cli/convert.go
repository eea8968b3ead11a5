package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/acptap/acptap/host/filekind"
	"github.com/acptap/acptap/host/transcript/term"

	"github.com/acptap/acptap/host/convert"
	"github.com/acptap/acptap/host/pipeline"
	"github.com/acptap/acptap/host/store"
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
	fs.StringVar(&from, "from", "", "what the LOGs are: "+strings.Join(convert.Froms, ", ")+" (required)")
	maxLine := registerMaxLine(fs)
	fs.BoolVar(&force, "force", false, "convert a LOG again although its wire log exists; the files it rewrites are kept as <file>.prev-<unix-nanoseconds>")
	inputs, code, ok := parseInterspersed(fs, args)
	if !ok {
		return code
	}
	switch {
	case from == "":
		fmt.Fprintf(env.Stderr, "acptap convert: --from is required (supported: %s)\n", strings.Join(convert.Froms, ", "))
		return ExitUsage
	case !slices.Contains(convert.Froms, from):
		fmt.Fprintf(env.Stderr, "acptap convert: --from %q is not supported (supported: %s)\n", from, strings.Join(convert.Froms, ", "))
		return ExitUsage
	case len(inputs) == 0:
		fmt.Fprintln(env.Stderr, "acptap convert: no LOG given")
		return ExitUsage
	}
	if n := slices.Index(inputs, "-"); n >= 0 && slices.Index(inputs[n+1:], "-") >= 0 {
		fmt.Fprintln(env.Stderr, "acptap convert: - (standard input) may be given once")
		return ExitUsage
	}
	cfg, err := c.load()
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap convert: %s\n", oneLine(err))
		return ExitFailure
	}
	logger, logCloser, err := newCommandLogger(cfg)
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap convert: %s\n", oneLine(err))
		return ExitFailure
	}
	defer closeQuietly(logCloser)
	st, err := store.Open(cfg.Store)
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap convert: %s\n", oneLine(err))
		return ExitFailure
	}
	finishPendingQuietly(env, cfg, st)
	cat, err := catalog(env, cfg)
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap convert: %s\n", oneLine(err))
		return ExitFailure
	}
	// What this command writes goes to the team store too, when one is
	// configured: a shipper follows this process and ships until nothing
	// is left (a rebuilt file ships as its next generation).
	startShipping(env, cfg, logger)
	revs := revisions(cfg)
	if len(revs[from]) == 0 {
		fmt.Fprintf(env.Stderr, "acptap convert: no plugins are configured for the revision %q: the wire logs are written, nothing is mapped\n", from)
	}

	// The first interrupt stops reading; what was read is still mapped.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // a second interrupt kills
	}()
	opts := convert.Options{Store: st, From: from, Force: force, Stdin: env.Stdin, MaxLine: *maxLine,
		Pipeline: pipeline.Options{
			Revisions: revs, SchemaRevision: cfg.SchemaRevision, DefaultRevision: from,
			Configs: cat.Configs, Launch: launcher(cat, logger), Logger: logger,
			BatchFrames: cfg.Tee.BatchFrames, MaxRestarts: cfg.Restart.Max, StallTimeout: cfg.Restart.StallTimeout,
		}}
	var bar *progressBar
	if isTerminal(env.Stderr) {
		opts.Progress = &convert.Progress{}
		bar = startProgress(env.Stderr, opts.Progress)
	}

	code = ExitOK
	var total convertTotals
	for _, in := range inputs {
		if ctx.Err() != nil {
			break
		}
		if in != "-" {
			if err := notKind(in, filekind.ACPLog); err != nil {
				fmt.Fprintf(env.Stderr, "acptap convert: %s\n", oneLine(err))
				code = ExitFailure
				total.failed++
				continue
			}
		}
		logger.Info("convert", "input", in, "from", from, "force", force)
		bar.resume()
		res, err := convert.Convert(ctx, in, opts)
		bar.pause()
		switch {
		case err != nil && res != nil && res.Wrote:
			// Read in part: what was read is in the store.
			printConvertResult(env.Stdout, st, res)
			fmt.Fprintf(env.Stderr, "acptap convert: %s\n", convertError(err))
			code = ExitFailure
		case err != nil:
			fmt.Fprintf(env.Stderr, "acptap convert: %s\n", convertError(err))
			code = ExitFailure
			total.failed++
			continue
		case res.Interrupted && !res.Wrote:
			fmt.Fprintf(env.Stderr, "acptap convert: interrupted before %s was converted; nothing was written for it\n", in)
			code = ExitInterrupt
			continue
		default:
			printConvertResult(env.Stdout, st, res)
		}
		total.add(res)
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
		total.print(env.Stdout)
	}
	return code
}

// convertError words a conversion error for stderr ("LOG: why").
func convertError(err error) string {
	return strings.TrimPrefix(oneLine(err), convert.ErrNotReadable.Error()+": ")
}

// convertTotals sums the results of several inputs.
type convertTotals struct {
	converted, existed, failed int
	frames, skipped, events    int
	records                    int
	sessions                   map[string]bool
}

func (t *convertTotals) add(r *convert.Result) {
	if r.Existed {
		t.existed++
		return
	}
	t.converted++
	t.frames += r.Frames()
	t.skipped += r.SkippedLines
	t.events += r.AEPEvents()
	t.records += r.ASRRecords()
	if t.sessions == nil {
		t.sessions = map[string]bool{}
	}
	for _, s := range r.Sessions {
		t.sessions[s] = true
	}
}

func (t *convertTotals) print(w io.Writer) {
	fmt.Fprintf(w, "total: %d converted, %d already converted, %d failed; %s, %s, %s, %s, %s\n",
		t.converted, t.existed, t.failed, counted(len(t.sessions), "session"), counted(t.frames, "frame"),
		counted(t.records, "ASR record"), counted(t.events, "AEP event"), counted(t.skipped, "skipped line"))
}

// printConvertResult writes one input's summary.
func printConvertResult(w io.Writer, st *store.Store, r *convert.Result) {
	name := r.Input
	if name == "-" {
		name = "(stdin)"
	}
	rel := func(p string) string {
		if s, err := filepath.Rel(st.Root(), p); err == nil && !strings.HasPrefix(s, "..") {
			return s
		}
		return p
	}
	if r.Existed {
		fmt.Fprintf(w, "%s: already converted (%s); skipped — --force converts it again\n", name, rel(r.WirePath))
		return
	}
	kind := r.Source.Format
	if r.Source.Gzip {
		kind += ", gzip"
	}
	fmt.Fprintf(w, "%s: %s → %s\n", name, kind, rel(r.WirePath))
	fmt.Fprintf(w, "  %s → %s (%d c2a, %d a2c)", counted(r.Lines, "line"), counted(r.Frames(), "frame"), r.FramesC2A, r.FramesA2C)
	if r.Gaps > 0 {
		fmt.Fprintf(w, ", %s", counted(r.Gaps, "gap"))
	}
	if r.Synthesized > 0 {
		fmt.Fprintf(w, ", %d synthesized (initialize exchange)", r.Synthesized)
	}
	fmt.Fprintln(w)
	var times []string
	for _, k := range []convert.TimeKind{convert.TimeReceived, convert.TimeSource, convert.TimeSynthetic} {
		if n := r.Times[k]; n > 0 {
			times = append(times, fmt.Sprintf("%d %s", n, k))
		}
	}
	if len(times) > 0 {
		note := ""
		if r.Times[convert.TimeSynthetic] > 0 {
			note = " (the input gave none: at is 1970-01-01T00:00:00Z + the line number in ms)"
		}
		fmt.Fprintf(w, "  times: %s%s\n", strings.Join(times, ", "), note)
	}
	fmt.Fprintf(w, "  sessions: %d", len(r.Sessions))
	if len(r.Sessions) > 0 {
		fmt.Fprintf(w, " (%s)", clipList(r.Sessions, 5))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  plugins: %s\n", dash(strings.Join(r.Plugins, ", ")))
	if r.ASRStreams == 0 && r.ASRRecords() == 0 {
		why := ""
		if !slices.Contains(r.Plugins, "acpv1") {
			why = " (the acpv1 plugin is not attached: it is not built in or configured)"
		}
		fmt.Fprintf(w, "  ASR: no streams%s\n", why)
	} else {
		fmt.Fprintf(w, "  ASR: %s, %s: %s\n", counted(r.ASRStreams, "stream"), counted(r.ASRRecords(), "record"), byCount(r.ASRTypes, 0))
	}
	fmt.Fprintf(w, "  AEP: %s", counted(r.AEPEvents(), "event"))
	if r.AEPEvents() > 0 {
		fmt.Fprintf(w, ": %s", byCount(r.AEPTypes, 6))
	}
	fmt.Fprintln(w)
	if len(r.Losses) > 0 {
		fmt.Fprintf(w, "  losses declared: %s\n", strings.Join(r.Losses, ", "))
	} else {
		fmt.Fprintln(w, "  losses declared: none")
	}
	if d := r.Diagnostics; len(d) > 0 {
		fmt.Fprintf(w, "  plugin diagnostics: %s (see the log)\n", byCount(d, 0))
	}
	if r.SkippedLines > 0 {
		fmt.Fprintf(w, "  skipped lines: %d (not failures): %s\n", r.SkippedLines, byCount(r.SkipReasons, 0))
		for _, s := range r.SkipExamples {
			fmt.Fprintf(w, "    %s:%d: %s\n", name, s.Line, s.Reason)
		}
		if more := r.SkippedLines - len(r.SkipExamples); more > 0 {
			fmt.Fprintf(w, "    … and %d more\n", more)
		}
	}
	for _, s := range r.Streams {
		fmt.Fprintf(w, "  wrote %s\n", rel(s))
	}
	for _, b := range r.Replaced {
		fmt.Fprintf(w, "  (previous file kept as %s)\n", rel(b))
	}
}

// byCount lists counts, largest first: "a 3, b 1"; with max > 0, only the
// first max.
func byCount(m map[string]int, max int) string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int {
		if c := cmp.Compare(m[b], m[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	more := 0
	if max > 0 && len(keys) > max {
		keys, more = keys[:max], len(keys)-max
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	if more > 0 {
		parts = append(parts, fmt.Sprintf("… %d more types", more))
	}
	return strings.Join(parts, ", ")
}

func clipList(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(", … %d more", len(items)-n)
}

// progressBar redraws one status line on a terminal, at most ten times a
// second: the input, how much of it is read, bytes and records per second,
// and the outputs so far.
type progressBar struct {
	w      io.Writer
	p      *convert.Progress
	mu     sync.Mutex
	done   chan struct{}
	wg     sync.WaitGroup
	last   string
	active bool
}

func startProgress(w io.Writer, p *convert.Progress) *progressBar {
	b := &progressBar{w: w, p: p, done: make(chan struct{})}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-b.done:
				return
			case <-t.C:
				b.draw()
			}
		}
	}()
	return b
}

func (b *progressBar) draw() {
	line := progressLine(b.p, time.Now())
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.active || line == "" || line == b.last {
		return
	}
	b.last = line
	fmt.Fprintf(b.w, "\r\x1b[K%s", line)
}

// pause erases the status line and stops redrawing it (while a summary is
// printed); resume redraws it again.
func (b *progressBar) pause() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.active = false
	if b.last != "" {
		fmt.Fprint(b.w, "\r\x1b[K")
		b.last = ""
	}
}

func (b *progressBar) resume() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.active = true
}

func (b *progressBar) stop() {
	if b == nil {
		return
	}
	close(b.done)
	b.wg.Wait()
	b.pause()
}

// progressLine renders the progress of the input being converted.
func progressLine(p *convert.Progress, now time.Time) string {
	name := p.Name()
	if name == "" {
		return ""
	}
	elapsed := now.Sub(time.Unix(0, p.Started.Load())).Seconds()
	if elapsed <= 0 {
		elapsed = 1e-9
	}
	read, size, frames := p.Read.Load(), p.Size.Load(), p.Frames.Load()
	if name == "-" {
		name = "(stdin)"
	}
	name = term.Clip(filepath.Base(name), 32)
	outs := p.Outputs.Load()
	if p.Mapping.Load() {
		pct := ""
		if frames > 0 {
			pct = fmt.Sprintf(" about %.0f%% of", 100*min(1, float64(p.Mapped.Load())/float64(frames)))
		}
		return fmt.Sprintf("%s: read; the plugins are mapping%s %s records · %s outputs", name, pct, human(float64(frames)), human(float64(outs)))
	}
	pct := ""
	if size > 0 {
		pct = fmt.Sprintf(" %3.0f%%", 100*float64(read)/float64(size))
	}
	return fmt.Sprintf("%s:%s %s/%s · %s/s · %s records (%s/s) · %s outputs", name, pct,
		bytesHuman(read), bytesHuman(size), bytesHuman(int64(float64(read)/elapsed)),
		human(float64(frames)), human(float64(frames)/elapsed), human(float64(outs)))
}

func bytesHuman(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func human(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

// counted is "1 frame", "2 frames".
func counted(n int, word string) string { return fmt.Sprintf("%d %s", n, plural(n, word)) }
