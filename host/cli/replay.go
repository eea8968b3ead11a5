package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/acptap/acptap/host/filekind"
	"github.com/acptap/acptap/internal/private"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/config"
	"github.com/acptap/acptap/host/pluginhost"
	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/internal/replay"
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
	to := fs.String("to", protoV2, "the ACP version to replay to: "+protoV2+" or "+protoV1+" (ACP v1 session/update lines, their own loss report)")
	pos, code, ok := parseInterspersed(fs, args)
	if !ok {
		return code
	}
	if !validProto(*to) {
		fmt.Fprintf(env.Stderr, "acptap replay: --to %s: give %s or %s\n", *to, protoV2, protoV1)
		return ExitUsage
	}
	if *fromCapture && *to != protoV2 {
		fmt.Fprintln(env.Stderr, "acptap replay: --from-capture resends the captured frames as they were; --to does not apply")
		return ExitUsage
	}
	if *serve != "" {
		if len(pos) > 0 {
			fmt.Fprintln(env.Stderr, "acptap replay: --serve takes the store and no other argument")
			return ExitUsage
		}
		c.store = *serve
		return runServe(env, &c, *pluginName)
	}
	if len(pos) != 1 {
		fmt.Fprintln(env.Stderr, "acptap replay: give one stream file or session ID")
		return ExitUsage
	}
	cfg, err := c.load()
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap replay: %s\n", oneLine(err))
		return ExitFailure
	}
	path, err := streamPath(env, cfg, pos[0])
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap replay: %s\n", oneLine(err))
		return ExitFailure
	}
	out := bufio.NewWriterSize(env.Stdout, 64<<10)
	var report []byte
	if *fromCapture {
		rep, err := captureReplay(path, wireDirs(cfg, path), out)
		if ferr := out.Flush(); err == nil {
			err = ferr
		}
		if err != nil {
			fmt.Fprintf(env.Stderr, "acptap replay: %s\n", oneLine(err))
			return ExitFailure
		}
		report = rep.Marshal()
	} else {
		logger, closer, err := newCommandLogger(cfg)
		if err != nil {
			fmt.Fprintf(env.Stderr, "acptap replay: %s\n", oneLine(err))
			return ExitFailure
		}
		defer closeQuietly(closer)
		rp, err := launchReplayerTo(context.Background(), env, cfg, logger, *pluginName, *to)
		if err != nil {
			fmt.Fprintf(env.Stderr, "acptap replay: %s\n", oneLine(err))
			return ExitFailure
		}
		defer rp.inst.Kill()
		report, err = rp.replayFile(context.Background(), path, func(o sdk.Output) error {
			switch o.Kind {
			case sdk.ACPFrame:
				out.Write(o.JSON)
				return out.WriteByte('\n')
			case sdk.Diagnostic:
				logger.Warn("replay: "+o.Summary, "detail", o.Detail, "session", o.Session)
				fmt.Fprintf(env.Stderr, "acptap replay: %s: %s\n", o.Summary, o.Detail)
			}
			return nil
		})
		if ferr := out.Flush(); err == nil {
			err = ferr
		}
		if err != nil {
			fmt.Fprintf(env.Stderr, "acptap replay: %s: %s\n", path, oneLine(err))
			return ExitFailure
		}
	}
	if err := writeReport(env, *reportPath, report); err != nil {
		fmt.Fprintf(env.Stderr, "acptap replay: %s\n", oneLine(err))
		return ExitFailure
	}
	return ExitOK
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

// replayPlugin is a plugin process with the replay capability.
type replayPlugin struct {
	inst   *pluginhost.Instance
	rep    sdk.Replayer
	config []byte
	target string
}

// launchReplayer starts the replay plugin out of process: the named one,
// or the first plugin configured for the ACP v2 revision whose Info claims
// "replay".
func launchReplayer(ctx context.Context, env *Env, cfg *config.Config, logger hclog.Logger, name string) (*replayPlugin, error) {
	return launchReplayerFor(ctx, env, cfg, logger, name, "acp/2@"+cfg.SchemaRevision, "acpv2")
}

// launchReplayerFor starts the replay plugin for target: the named one, or
// the first plugin configured for target (a revision of the configuration,
// "acp/1" for ACP v1) whose Info claims "replay", the built-in fallback
// last.
func launchReplayerFor(ctx context.Context, env *Env, cfg *config.Config, logger hclog.Logger, name, target, fallback string) (*replayPlugin, error) {
	cat, err := catalog(env, cfg)
	if err != nil {
		return nil, err
	}
	candidates := []string{name}
	if name == "" {
		candidates = slices.Clone(revisions(cfg)[target])
		if !slices.Contains(candidates, fallback) {
			candidates = append(candidates, fallback)
		}
	}
	var errs []string
	for _, n := range candidates {
		spec, err := cat.Resolve(n)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		inst, err := pluginhost.Launch(ctx, spec, logger)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		rep, ok := inst.Mapper.(sdk.Replayer)
		if !ok || !inst.Info.Can(sdk.CapabilityReplay) {
			inst.Kill()
			errs = append(errs, fmt.Sprintf("plugin %s has no replay capability", n))
			continue
		}
		return &replayPlugin{inst: inst, rep: rep, config: spec.Config, target: target}, nil
	}
	return nil, fmt.Errorf("no replay plugin for %s: %s", target, strings.Join(errs, "; "))
}

// replayFile replays the stream at path through the plugin and returns the
// loss report.
func (p *replayPlugin) replayFile(ctx context.Context, path string, emit func(sdk.Output) error) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return p.replayAs(ctx, f, streamTarget(f, p.target), emit)
}

func (p *replayPlugin) replay(ctx context.Context, r io.Reader, emit func(sdk.Output) error) ([]byte, error) {
	return p.replayAs(ctx, r, p.target, emit)
}

// streamTarget is the revision a stream is replayed to: when def is an
// ACP v2 revision, the ACP v2 draft the stream's header names
// (producer.source.formatVersion, e.g. "2.0.0-alpha.13" →
// "acp/2@2.0.0-alpha.13"), so a stream of the newer draft is replayed as
// that draft's frames; else def (an ACP v1 replay stays ACP v1). f is left
// at its start.
func streamTarget(f *os.File, def string) string {
	if !strings.HasPrefix(def, "acp/2") {
		return def
	}
	defer f.Seek(0, io.SeekStart)
	line, err := bufio.NewReaderSize(f, 64<<10).ReadSlice('\n')
	if err != nil && len(line) == 0 {
		return def
	}
	var h struct {
		Producer struct {
			Source struct {
				Format        string `json:"format"`
				FormatVersion string `json:"formatVersion"`
			} `json:"source"`
		} `json:"producer"`
	}
	if json.Unmarshal(line, &h) != nil || h.Producer.Source.Format != "acp" || !strings.HasPrefix(h.Producer.Source.FormatVersion, "2.") {
		return def
	}
	return "acp/2@" + h.Producer.Source.FormatVersion
}

func (p *replayPlugin) replayAs(ctx context.Context, r io.Reader, target string, emit func(sdk.Output) error) ([]byte, error) {
	report, err := p.rep.Replay(ctx, p.config, target, r, emit)
	if err != nil {
		return nil, err
	}
	if _, err := replay.ParseLossReport(report); err != nil {
		return nil, fmt.Errorf("plugin %s: %w", p.inst.Spec.Name, err)
	}
	return report, nil
}
