package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/builtin"
	"github.com/acptap/acptap/host/config"
	"github.com/acptap/acptap/host/pluginhost"
	"github.com/acptap/acptap/host/recording"
)

// common are the flags every store-touching command takes.
type common struct {
	store     string
	config    string
	logFile   string
	logLevel  string
	logStderr bool
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.store, "store", "", "store root (default $XDG_DATA_HOME/acptap)")
	fs.StringVar(&c.config, "config", "", "config file (default $XDG_CONFIG_HOME/acptap/config.toml)")
	fs.StringVar(&c.logFile, "log-file", "", "log file (default <store>/logs/acptap.log)")
	fs.StringVar(&c.logLevel, "log-level", "", "log level: trace, debug, info, warn, error")
	fs.BoolVar(&c.logStderr, "log-stderr", false, "log to stderr instead of the log file")
}

// load layers defaults, the config file, ACPTAP_ environment and flags.
func (c *common) load() (*config.Config, error) {
	flags := map[string]any{}
	if c.store != "" {
		flags["store"] = c.store
	}
	if c.logFile != "" {
		flags["log.file"] = c.logFile
	}
	if c.logLevel != "" {
		flags["log.level"] = c.logLevel
	}
	if c.logStderr {
		flags["log.stderr"] = true
	}
	cfg, err := config.Load(config.LoadOptions{File: c.config, Flags: flags, Builtins: builtin.Names()})
	if err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// parseFlags parses a command's flags, which may come before, between or
// after its arguments (`acptap show s1 --no-color`); `--` ends the flags.
// ok is false when the command must not run, with the code to exit with:
// ExitOK after -h/--help (the usage went to stdout), ExitUsage after a bad
// flag (one line on stderr). Every command parses through here (record
// through parseFlagsBeforeCommand), so the conventions are one.
func parseFlags(fs *flag.FlagSet, args []string) (code int, ok bool) {
	return reportParse(fs, parseArgs(fs, args, true))
}

// parseFlagsBeforeCommand is parseFlags for `record`: the flags end at the
// first argument, where the agent's command (with its own flags) begins.
// It returns the parse error too, for record's rule on bad flags.
func parseFlagsBeforeCommand(fs *flag.FlagSet, args []string) (code int, ok bool, err error) {
	err = parseArgs(fs, args, false)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		return ExitUsage, false, err
	}
	code, ok = reportParse(fs, err)
	return code, ok, nil
}

// parseArgs parses args into fs; with interspersed, arguments may come
// between flags. fs.Args() is the arguments afterwards.
func parseArgs(fs *flag.FlagSet, args []string, interspersed bool) error {
	var pos []string
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			return err
		}
		left := fs.Args()
		used := len(rest) - len(left)
		if !interspersed || len(left) == 0 || (used > 0 && rest[used-1] == "--") {
			pos = append(pos, left...)
			break
		}
		pos, rest = append(pos, left[0]), left[1:]
	}
	// Parse again with only the arguments, so that fs.Args() holds them.
	return fs.Parse(append([]string{"--"}, pos...))
}

// reportParse prints the outcome of a parse: the usage on stdout after
// -h/--help, the error in one line on stderr after a bad flag.
func reportParse(fs *flag.FlagSet, err error) (int, bool) {
	u, _ := fs.Output().(*usageOut)
	switch {
	case err == nil:
		return ExitOK, true
	case errors.Is(err, flag.ErrHelp):
		if u != nil {
			_, _ = u.env.Stdout.Write(u.buf.Bytes())
		}
		return ExitOK, false
	}
	if u != nil {
		fmt.Fprintf(u.env.Stderr, "acptap %s: %s (see `acptap %s --help`)\n", fs.Name(), oneLine(err), fs.Name())
	}
	return ExitUsage, false
}

// usageOut collects what the flag package prints (the usage, an error):
// reportParse decides where it goes.
type usageOut struct {
	env *Env
	buf bytes.Buffer
}

func (u *usageOut) Write(p []byte) (int, error) { return u.buf.Write(p) }

func newFlagSet(env *Env, name, args, about string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(&usageOut{env: env})
	fs.Usage = func() {
		u := fs.Output().(*usageOut)
		u.buf.Reset()
		fmt.Fprintf(u, "Usage: acptap %s %s\n\n%s\n\nFlags:\n", name, args, about)
		fs.PrintDefaults()
	}
	return fs
}

// catalog builds the plugin catalog from the config.
func catalog(env *Env, cfg *config.Config) (*pluginhost.Catalog, error) {
	return recording.Catalog(cfg, env.Self)
}

// revisions is the config's revisions table without disabled plugins.
func revisions(cfg *config.Config) map[string][]string { return recording.Revisions(cfg) }

func closeQuietly(c io.Closer) {
	if c != nil {
		_ = c.Close()
	}
}

func oneLine(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}

func newCommandLogger(cfg *config.Config) (hclog.Logger, io.Closer, error) {
	return config.NewLogger(cfg, "acptap")
}
