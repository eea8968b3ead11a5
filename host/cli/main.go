package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/acptap/acptap/host/builtin"
	"github.com/acptap/acptap/host/pluginhost"
	"github.com/acptap/acptap/internal/pluginwire"
	"github.com/acptap/acptap/sdk/plugin"
)

// Exit codes shared by every command. `record` exits with the agent's own
// code instead (128+n when the agent was killed by signal n).
const (
	ExitOK        = 0
	ExitFailure   = 1   // the command ran and found a problem (e.g. invalid input)
	ExitUsage     = 2   // bad flags or arguments
	ExitNoStart   = 127 // record: the agent could not be started
	ExitInterrupt = 130
)

type command struct {
	name    string
	summary string
	run     func(env *Env, args []string) int
}

// Env is what a command talks to; tests substitute buffers.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Self is the path of the acptap binary (re-executed for built-in
	// plugins and the demo's agent and client).
	Self string
}

func commands() []command {
	return []command{
		{"record", "run an agent through the tee and record the session", runRecord},
		{"rebuild", "write the outputs a live run would have written, from wire logs", runRebuild},
		{"convert", "convert stored ACP v1 logs into the store (wire log, ASR streams, AEP events)", runConvert},
		{"replay", "replay a stored ASR stream as ACP v2 updates, or serve stored sessions to an editor", runReplay},
		{"roundtrip", "check that recording a stream's replay gives the same context view (ASR-732)", runRoundtrip},
		{"plugins", "list the plugins found, their claims, checksums and health", runPlugins},
		{"relay", "run an AEP receiver: validate, dedupe and store events posted to /events", runRelay},
		{"export", "send sessions to an OpenTelemetry collector (--otlp), or write one as HTML or Markdown", runExport},
		{"ship", "publish the store's outputs to the team store on NATS JetStream", runShip},
		{"collect", "write every origin's outputs from the team store into a central store", runCollect},
		{"validate", "check ASR streams against the ASR schema and stream invariants", runValidate},
		{"show", "print an ASR stream as a readable transcript", runShow},
		{"ui", "serve a local web viewer of the store's sessions", runUI},
		{"sessions", "list the recorded sessions (newest first), filtered by agent, date and cwd", runSessions},
		{"demo", "record a bundled example agent and client, then show what was written", runDemo},
		{"version", "print the version", runVersion},
	}
}

// Main runs acptap with the given arguments and returns the exit code.
func Main(args []string) int {
	if name := os.Getenv(pluginhost.PluginModeEnv); name != "" {
		return servePlugin(name)
	}
	self, err := os.Executable()
	if err != nil {
		self = os.Args[0]
	}
	env := &Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Self: self}
	if len(args) > 0 {
		if code, ok := runHidden(env, args); ok {
			return code
		}
	}
	return Run(env, args)
}

// Run dispatches a subcommand.
func Run(env *Env, args []string) int {
	if len(args) == 0 {
		usage(env.Stderr)
		return ExitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help":
		usage(env.Stdout)
		return ExitOK
	case "help": // `acptap help CMD` is `acptap CMD --help`
		if len(args) == 1 {
			usage(env.Stdout)
			return ExitOK
		}
		args = []string{args[1], "--help"}
	case "-version", "--version":
		args = []string{"version"}
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(env, args[1:])
		}
	}
	fmt.Fprintf(env.Stderr, "acptap: unknown command %q (see acptap --help)\n", args[0])
	return ExitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "acptap — record Agent Client Protocol sessions as ASR streams and AEP events")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: acptap <command> [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run `acptap <command> --help` for a command's flags. Exit codes: 0 ok, 1 failure,")
	fmt.Fprintln(w, "2 usage; `record` exits with the agent's code (128+n if killed by signal n, 127 if it")
	fmt.Fprintln(w, "could not be started).")
}

// servePlugin runs a built-in plugin (the binary re-executed by the host).
func servePlugin(name string) int {
	f, ok := builtin.Factories()[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "acptap: no built-in plugin %q\n", name)
		return ExitUsage
	}
	m := f()
	pluginwire.SetOfflineGC(OfflineGCPercent) // rebuild and convert: fewer collections (limits.go)
	if w, ok := m.(interface{ Warm() }); ok {
		go w.Warm() // what the first frame needs, while the host connects
	}
	plugin.Serve(m)
	return ExitOK
}
