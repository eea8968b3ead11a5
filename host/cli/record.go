package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/config"
	"github.com/acptap/acptap/host/recording"
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
	return record(env, &c, cfg, agent)
}

// passThrough runs the agent through the tee with nothing observing.
func passThrough(env *Env, agent []string) int {
	code, err := recording.PassThrough(recordSettings(env, nil, nil, agent))
	if err != nil {
		fmt.Fprintln(env.Stderr, oneLine(err))
	}
	return code
}

// recordSettings are a recording's settings from the command's
// environment and flags.
func recordSettings(env *Env, c *common, cfg *config.Config, agent []string) recording.Settings {
	s := recording.Settings{Config: cfg, Agent: agent, Self: env.Self, Stdin: env.Stdin, Stdout: env.Stdout,
		Stderr: env.Stderr, Watchdog: watchdog(env), Version: version(), ExitsAfterShutdown: true}
	if c != nil {
		s.Finisher = append([]string{hiddenFinish}, c.args()...)
		s.Stored = func(logger hclog.Logger) { startShipping(env, cfg, logger) }
	}
	return s
}

// record runs the agent with the recording beside it and exits with the
// agent: the editor sees EOF when the agent's last byte is forwarded, and
// the mapping left is handed to a detached finisher.
func record(env *Env, c *common, cfg *config.Config, agent []string) int {
	keepSIGPIPE()
	s := recordSettings(env, c, cfg, agent)
	s.Stdin = isolateStdin(env.Stdin)
	rec := recording.New(s)
	if err := rec.Start(context.Background()); err != nil {
		fmt.Fprintln(env.Stderr, oneLine(err))
		return rec.ExitCode()
	}
	guard := guardFinish()
	defer guard.stop()
	code, err := rec.Wait()
	guard.agentExited(code)
	if err != nil {
		fmt.Fprintln(env.Stderr, oneLine(err))
	}
	// Every byte of the agent is forwarded: the editor sees EOF now, not
	// when acptap has finished.
	closeStdout(env.Stdout)
	_ = rec.Shutdown(context.Background())
	return code
}

// closeStdout releases the process's stdout once the tee has forwarded the
// agent's last byte (nothing else writes it): the editor sees EOF.
func closeStdout(w io.Writer) {
	if f, ok := w.(*os.File); ok && f == os.Stdout {
		releaseStdout(f)
	}
}
