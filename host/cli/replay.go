package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/acptap/acptap/host/config"
	"github.com/acptap/acptap/host/filekind"
	"github.com/acptap/acptap/host/replay"
	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/internal/private"
	"github.com/acptap/acptap/sdk"
)

func runReplay(env *Env, args []string) int {
	var c common
	fs := newFlagSet(env, "replay", "[flags] STREAM | SESSION-ID\n       acptap replay --serve STORE",
		"Replays a stored ASR stream as ACP v2: one session/update JSON-RPC notification per line on\n"+
			"stdout, as an agent replays history on session/resume (ASR-724…730), through the plugin\n"+
			"that maps the stream's revision (acpv2), out of process. STREAM is a stream file; a\n"+
			"SESSION-ID names a session in the store. The loss report (JSON, ASR-731: what the stream\n"+
			"contained that a replay does not carry) goes to stderr, or to --report FILE.\n\n"+
			"--from-capture resends the agent's session/update frames byte for byte from the wire logs\n"+
			"the stream's records point to (ASR-733), instead of rebuilding them.\n\n"+
			"--to acp-v1 replays as ACP v1 instead (through the plugin configured for \"acp/1\" that can\n"+
			"replay, acpv1): the v2 replay translated into v1 updates, with v1's own losses in the report.\n\n"+
			"--serve STORE makes acptap a read-only ACP agent on stdin/stdout that an editor can run,\n"+
			"in the version the client asks for: session/list lists the stored sessions; session/resume\n"+
			"with replayFrom {type: \"start\"} (ACP v2) or session/load (ACP v1) replays one; a prompt is\n"+
			"refused with an error saying the session is a recording.\n\n"+
			"Exits 1 if the stream cannot be read or the plugin fails.")
	c.register(fs)
	reportPath := fs.String("report", "", "write the loss report to FILE instead of stderr")
	fromCapture := fs.Bool("from-capture", false, "resend the captured session/update frames from the wire log (byte-level, ASR-733)")
	serve := fs.String("serve", "", "serve the sessions of STORE as a read-only ACP agent (v2, or v1 to a v1 client) on stdin/stdout")
	pluginName := fs.String("plugin", "", "the replay plugin (default: the first plugin configured for the ACP v2 revision, or for \"acp/1\" with --to acp-v1, that can replay; with --serve, the v2 one)")
	to := fs.String("to", replay.ProtoV2, "the ACP version to replay to: "+replay.ProtoV2+" or "+replay.ProtoV1+" (ACP v1 session/update lines, their own loss report)")
	pos, code, ok := parseInterspersed(fs, args)
	if !ok {
		return code
	}
	fail := func(err error) int {
		fmt.Fprintf(env.Stderr, "acptap replay: %s\n", oneLine(err))
		return ExitFailure
	}
	switch {
	case !replay.ValidProto(*to):
		fmt.Fprintf(env.Stderr, "acptap replay: --to %s: give %s or %s\n", *to, replay.ProtoV2, replay.ProtoV1)
		return ExitUsage
	case *fromCapture && *to != replay.ProtoV2:
		fmt.Fprintln(env.Stderr, "acptap replay: --from-capture resends the captured frames as they were; --to does not apply")
		return ExitUsage
	case *serve != "" && len(pos) > 0:
		fmt.Fprintln(env.Stderr, "acptap replay: --serve takes the store and no other argument")
		return ExitUsage
	case *serve != "":
		c.store = *serve
		return runServe(env, &c, *pluginName)
	case len(pos) != 1:
		fmt.Fprintln(env.Stderr, "acptap replay: give one stream file or session ID")
		return ExitUsage
	}
	cfg, err := c.load()
	if err != nil {
		return fail(err)
	}
	path, err := streamPath(env, cfg, pos[0])
	if err != nil {
		return fail(err)
	}
	var report []byte
	if *fromCapture {
		rep, err := replay.Capture(path, replay.WireDirs(path, cfg.Store), env.Stdout)
		if err != nil {
			return fail(err)
		}
		report = rep.Marshal()
	} else {
		ps, closer, err := replayPlugins(env, cfg)
		if err != nil {
			return fail(err)
		}
		defer closeQuietly(closer)
		logger := ps.Logger
		p, err := ps.Launch(context.Background(), *pluginName, *to)
		if err != nil {
			return fail(err)
		}
		defer p.Kill()
		report, err = replay.Stream(context.Background(), p, path, env.Stdout, func(o sdk.Output) {
			logger.Warn("replay: "+o.Summary, "detail", o.Detail, "session", o.Session)
			fmt.Fprintf(env.Stderr, "acptap replay: %s: %s\n", o.Summary, o.Detail)
		})
		if err != nil {
			return fail(err)
		}
	}
	if err := writeReport(env, *reportPath, report); err != nil {
		return fail(err)
	}
	return ExitOK
}

// runServe is `acptap replay --serve STORE` (replay.Plugins.Serve).
func runServe(env *Env, c *common, pluginName string) int {
	fail := func(err error) int {
		fmt.Fprintf(env.Stderr, "acptap replay --serve: %s\n", oneLine(err))
		return ExitFailure
	}
	cfg, err := c.load()
	if err != nil {
		return fail(err)
	}
	if fi, err := os.Stat(cfg.Store); err != nil || !fi.IsDir() {
		return fail(fmt.Errorf("no store at %s", cfg.Store))
	}
	st, err := store.Open(cfg.Store)
	if err != nil {
		return fail(err)
	}
	ps, closer, err := replayPlugins(env, cfg)
	if err != nil {
		return fail(err)
	}
	defer closeQuietly(closer)
	if err := ps.Serve(st, version(), pluginName, env.Stdin, env.Stdout); err != nil {
		ps.Logger.Error("serve", "error", err)
		return fail(err)
	}
	return ExitOK
}

// replayPlugins opens the command's log and what starts the configured
// replay plugins; the caller closes the log.
func replayPlugins(env *Env, cfg *config.Config) (*replay.Plugins, io.Closer, error) {
	logger, closer, err := newCommandLogger(cfg)
	if err != nil {
		return nil, nil, err
	}
	cat, err := catalog(env, cfg)
	if err != nil {
		closeQuietly(closer)
		return nil, nil, err
	}
	return &replay.Plugins{Catalog: cat, Revisions: revisions(cfg), SchemaRevision: cfg.SchemaRevision, Logger: logger}, closer, nil
}

// parseInterspersed parses flags that may come before or after the
// positional arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) (pos []string, code int, ok bool) {
	if code, ok := parseFlags(fs, args); !ok {
		return nil, code, false
	}
	return fs.Args(), ExitOK, true
}

// streamPath resolves a stream file, or a session ID in the store.
func streamPath(env *Env, cfg *config.Config, arg string) (string, error) {
	if st, err := os.Stat(arg); err == nil && st.Mode().IsRegular() {
		return arg, notKind(arg, filekind.ASR)
	}
	if cfg.Store == "" {
		return "", fmt.Errorf("%s: no such file, and no store to look the session up in", arg)
	}
	st, err := store.Open(cfg.Store)
	if err != nil {
		return "", err
	}
	finishPendingQuietly(env, cfg, st)
	p := st.StreamPath(arg)
	if _, err := os.Stat(p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s: no such file, and no session %q in the store %s", arg, arg, st.Root())
		}
		return "", err
	}
	return p, nil
}

func writeReport(env *Env, path string, report []byte) error {
	if path == "" {
		_, err := env.Stderr.Write(report)
		return err
	}
	return os.WriteFile(path, report, private.FileMode)
}
