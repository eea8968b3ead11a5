package cli

import (
	"bufio"
	"fmt"
	"os"

	"github.com/acptap/acptap/host/transcript"
	"github.com/acptap/acptap/sdk/aep"
)

func runExport(env *Env, args []string) int {
	var c common
	fs := newFlagSet(env, "export", "[flags] STREAM",
		"Writes a stream as one self-contained HTML page (styles inline, no script, nothing fetched:\n"+
			"it opens offline) or as Markdown. --capture chooses how much of prompts, replies, tool\n"+
			"payloads and file contents goes in (the AEP capture levels): full, redacted (through the AEP\n"+
			"redaction pipeline), metadata (sizes only) or none. Secrets the store never held cannot\n"+
			"appear. A STREAM is a file, - for stdin, or a session ID in the store.")
	registerStoreFlags(fs, &c)
	html := fs.Bool("html", false, "write HTML (the default)")
	md := fs.Bool("markdown", false, "write Markdown")
	capture := fs.String("capture", "full", "capture `LEVEL`: full, redacted, metadata or none")
	out := fs.String("o", "", "write to `FILE` instead of stdout")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 || (*html && *md) {
		fmt.Fprintln(env.Stderr, "acptap export: give exactly one stream, and --html or --markdown (not both)")
		return ExitUsage
	}
	level, err := aep.ParseLevel(*capture)
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap export: --capture: %q is not none, metadata, redacted or full\n", *capture)
		return ExitUsage
	}
	format := transcript.FormatHTML
	if *md {
		format = transcript.FormatMarkdown
	}
	name, r, err := openStream(env, &c, fs.Arg(0))
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap export: %s\n", oneLine(err))
		return ExitFailure
	}
	defer r.Close()
	w := env.Stdout
	var f *os.File
	if *out != "" {
		if f, err = os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600); err != nil {
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
