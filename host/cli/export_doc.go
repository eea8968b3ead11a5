package cli

import (
	"bufio"
	"fmt"
	"os"

	"github.com/acptap/acptap/host/transcript"
	"github.com/acptap/acptap/internal/private"
	"github.com/acptap/acptap/sdk/aep"
)

// exportDocument writes one stream (args) as HTML or Markdown at a capture
// level: acptap export --html|--markdown.
func exportDocument(env *Env, c *common, args []string, md bool, capture, out string) int {
	if len(args) != 1 {
		fmt.Fprintln(env.Stderr, "acptap export: --html and --markdown take exactly one STREAM")
		return ExitUsage
	}
	level, err := aep.ParseLevel(capture)
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap export: --capture: %q is not none, metadata, redacted or full\n", capture)
		return ExitUsage
	}
	format := transcript.FormatHTML
	if md {
		format = transcript.FormatMarkdown
	}
	name, r, err := openStream(env, c, args[0])
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap export: %s\n", oneLine(err))
		return ExitFailure
	}
	defer r.Close()
	w := env.Stdout
	var f *os.File
	if out != "" {
		if f, err = private.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC); err != nil {
			fmt.Fprintf(env.Stderr, "acptap export: %s\n", oneLine(err))
			return ExitFailure
		}
		w = f
	}
	bw := bufio.NewWriter(w)
	err = transcript.Export(bw, r, format, level)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if f != nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap export: %s: %s\n", name, oneLine(err))
		return ExitFailure
	}
	return ExitOK
}
