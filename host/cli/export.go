package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/acptap/acptap/host/config"
	"github.com/acptap/acptap/host/otlp"
	"github.com/acptap/acptap/host/otlp/spool"
	"github.com/acptap/acptap/host/store"
)

// sessionList is a repeatable --session flag.
type sessionList []string

func (s *sessionList) String() string     { return strings.Join(*s, ",") }
func (s *sessionList) Set(v string) error { *s = append(*s, v); return nil }

var _ flag.Value = (*sessionList)(nil)

func runExport(env *Env, args []string) int {
	var (
		c                  common
		toOTLP, all        bool
		endpoint, protocol string
		sessions           sessionList
		wait               time.Duration
	)
	fs := newFlagSet(env, "export", "--otlp [--endpoint URL] [--protocol P] [--session ID … | --all] [flags]\n"+
		"       acptap export --html|--markdown [--capture LEVEL] [-o FILE] [flags] STREAM",
		"--html or --markdown write one stream as a self-contained HTML page (styles inline, no script,\n"+
			"nothing fetched: it opens offline) or as Markdown; --capture chooses how much of prompts,\n"+
			"replies, tool payloads and file contents goes in (the AEP capture levels): full, redacted\n"+
			"(through the AEP redaction pipeline), metadata (sizes only) or none. A STREAM is a file, - for\n"+
			"stdin, or a session ID in the store.\n\n"+
			"--otlp sends stored sessions to an OpenTelemetry collector (backfill): each AEP event as an OTLP log\n"+
			"record (AEP-0005), each turn and tool call as GenAI spans, with the ids a live recording\n"+
			"sends. The endpoint, protocol and headers come from --endpoint/--protocol, then [otlp] in\n"+
			"the config, then OTEL_EXPORTER_OTLP_*. Records go through a spool in the store\n"+
			"(<store>/otlp/export): an interrupted export resumes there on the next run. Without\n"+
			"--session or --all it delivers what earlier exports and recordings left spooled.\n"+
			"Progress on stderr; exits 1 when something could not be read or delivered.")
	fs.BoolVar(&toOTLP, "otlp", false, "send sessions to an OpenTelemetry collector")
	html := fs.Bool("html", false, "write STREAM as one self-contained HTML page")
	md := fs.Bool("markdown", false, "write STREAM as Markdown")
	capture := fs.String("capture", "full", "with --html/--markdown: capture `LEVEL` (full, redacted, metadata, none)")
	out := fs.String("o", "", "with --html/--markdown: write to `FILE` instead of stdout")
	fs.StringVar(&endpoint, "endpoint", "", "collector base URL (overrides otlp.endpoint and OTEL_EXPORTER_OTLP_ENDPOINT)")
	fs.StringVar(&protocol, "protocol", "", "grpc or http/protobuf (overrides otlp.protocol and OTEL_EXPORTER_OTLP_PROTOCOL)")
	fs.Var(&sessions, "session", "a stored session ID to send (repeatable)")
	fs.BoolVar(&all, "all", false, "send every stored session")
	fs.DurationVar(&wait, "wait", time.Minute, "how long to keep retrying an unreachable collector before giving up (what is left stays spooled)")
	c.register(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if n := btoi(toOTLP) + btoi(*html) + btoi(*md); n != 1 {
		fmt.Fprintln(env.Stderr, "acptap export: give one of --otlp, --html or --markdown")
		return ExitUsage
	}
	if *html || *md {
		return exportDocument(env, &c, fs.Args(), *md, *capture, *out)
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(env.Stderr, "acptap export: unexpected arguments %q\n", fs.Args())
		return ExitUsage
	case all && len(sessions) > 0:
		fmt.Fprintln(env.Stderr, "acptap export: --session and --all exclude each other")
		return ExitUsage
	}
	cfg, err := c.load()
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap export: config: %s\n", oneLine(err))
		return ExitFailure
	}
	fail := func(err error) int {
		fmt.Fprintf(env.Stderr, "acptap export: %s\n", oneLine(err))
		return ExitFailure
	}
	logger, closer, err := config.NewLogger(cfg, "acptap")
	if err != nil {
		return fail(err)
	}
	defer closeQuietly(closer)
	settings := otlp.SettingsOf(cfg.OTLP)
	if endpoint != "" {
		settings.Endpoint = endpoint
	}
	if protocol != "" {
		settings.Protocol = protocol
	}
	logs, traces, err := otlp.Endpoints(settings, os.Getenv)
	if err != nil {
		return fail(err)
	}
	client, err := otlp.NewClient(logs, traces)
	if err != nil {
		return fail(err)
	}
	defer client.Close()
	st, err := store.Open(cfg.Store)
	if err != nil {
		return fail(err)
	}
	files, err := exportFiles(st, sessions, all)
	if err != nil {
		return fail(err)
	}
	sp, err := spool.Open(otlp.ExportSpoolDir(cfg.Store), cfg.OTLP.SpoolBytes)
	if err != nil {
		return fail(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(env.Stderr, "acptap export: to %s\n", client.Describe())
	deliver := func(sp *spool.Spool, what string) bool {
		if sp.Empty() {
			return true
		}
		dctx, cancel := context.WithTimeout(ctx, wait)
		defer cancel()
		snd := &otlp.Sender{Spool: sp, Client: client, Logger: logger.Named("otlp"), Progress: func(d otlp.DeliveryStats) {
			fmt.Fprintf(env.Stderr, "acptap export: %s: delivered %d segments (%d log records, %d spans), %d waiting\n",
				what, d.Segments, d.LogRecords, d.Spans, sp.Len())
		}}
		err := snd.Run(dctx, true)
		d := snd.Stats()
		if d.Rejected > 0 {
			fmt.Fprintf(env.Stderr, "acptap export: %s: the collector refused %d records: %s\n", what, d.Rejected, d.LastError)
		}
		if err != nil {
			why := d.LastError
			if why == "" {
				why = err.Error()
			}
			fmt.Fprintf(env.Stderr, "acptap export: %s: not delivered (%s); %d segments stay in %s and are sent by the next export\n",
				what, why, sp.Len(), sp.Dir())
			return false
		}
		return d.Rejected == 0
	}
	ok := deliver(sp, "left from an earlier export")
	if len(files) == 0 {
		rec, err := spool.Open(otlp.SpoolDir(cfg.Store), cfg.OTLP.SpoolBytes)
		if err != nil {
			return fail(err)
		}
		ok = deliver(rec, "left by recordings") && ok
	}
	info := &otlp.ASRInfo{Path: st.StreamPath}
	bad := false
	for i, f := range files {
		if !ok || ctx.Err() != nil {
			break
		}
		res, err := otlp.SpoolFile(f, sp, otlp.MaxCaptureOf(cfg.OTLP), version(), info.Agent, 0)
		for _, s := range res.Skipped {
			fmt.Fprintf(env.Stderr, "%s\n", s.Error())
			bad = true
		}
		if err != nil {
			return fail(err)
		}
		var dropped uint64
		for _, n := range res.Dropped {
			dropped += n
		}
		if dropped > 0 {
			fmt.Fprintf(env.Stderr, "acptap export: the spool is full: %d records dropped (debug and info first): %v\n", dropped, res.Dropped)
			bad = true
		}
		name := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		fmt.Fprintf(env.Stderr, "acptap export: session %d/%d %s: %d events → %d log records, %d spans\n",
			i+1, len(files), name, res.Events, res.Logs, res.Spans)
		ok = deliver(sp, name)
	}
	if !ok || bad || ctx.Err() != nil {
		return ExitFailure
	}
	fmt.Fprintln(env.Stderr, "acptap export: done")
	return ExitOK
}

// exportFiles lists the AEP event files of the chosen sessions.
func exportFiles(st *store.Store, sessions []string, all bool) ([]string, error) {
	if all {
		dir := filepath.Dir(st.AEPPath("x"))
		ents, err := os.ReadDir(dir)
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		var out []string
		for _, e := range ents {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".jsonl") {
				out = append(out, filepath.Join(dir, e.Name()))
			}
		}
		slices.Sort(out)
		return out, nil
	}
	var out []string
	for _, id := range sessions {
		p := st.AEPPath(id)
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("session %q: no AEP events in the store (%s)", id, p)
		}
		out = append(out, p)
	}
	return out, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
