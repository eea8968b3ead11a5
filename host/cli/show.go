package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/acptap/acptap/host/filekind"
	"github.com/acptap/acptap/host/transcript/term"
)

func runShow(env *Env, args []string) int {
	var c common
	fs := newFlagSet(env, "show", "[flags] STREAM",
		"Prints an ASR stream (or a wire log: its frames) as a readable transcript: who said what (reasoning dimmed), tool calls\n"+
			"and their results, permissions and their decisions, questions, file changes, plans,\n"+
			"terminals, usage and state changes, with the declared losses at the top. Records appear in\n"+
			"stream order; a revision says which record it revises. Colour when stdout is a terminal\n"+
			"(not when NO_COLOR is set). A STREAM is a file, - for stdin, or a session ID in the store.\n"+
			"Exits 1 if the stream cannot be read or has lines that are not records.")
	registerStoreFlags(fs, &c)
	noColor := fs.Bool("no-color", false, "never colour the output")
	color := fs.Bool("color", false, "colour the output even when stdout is not a terminal")
	maxLine := registerMaxLine(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(env.Stderr, "acptap show: give exactly one stream")
		return ExitUsage
	}
	on := (*color || isTerminal(env.Stdout)) && !*noColor && os.Getenv("NO_COLOR") == ""
	if k, err := filekind.SniffFile(fs.Arg(0)); err == nil && k == filekind.Wire {
		if err := term.Wire(env.Stdout, fs.Arg(0), on); err != nil {
			fmt.Fprintf(env.Stderr, "acptap show: %s: %s\n", fs.Arg(0), oneLine(err))
			return ExitFailure
		}
		return ExitOK
	}
	name, r, err := openStream(env, &c, fs.Arg(0))
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap show: %s\n", oneLine(err))
		return ExitFailure
	}
	defer r.Close()
	bad, err := term.Show(env.Stdout, r, term.Options{Color: on, MaxLine: *maxLine})
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap show: %s: %s\n", name, oneLine(err))
		return ExitFailure
	}
	if bad > 0 {
		fmt.Fprintf(env.Stderr, "acptap show: %s: %d %s could not be shown; `acptap validate %s` says why\n", name, bad, plural(bad, "line"), name)
		return ExitFailure
	}
	return ExitOK
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
