package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/acptap/acptap/host/filekind"
	"io"
	"io/fs"
	"os"

	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/sdk/asr/asrcheck"
)

// maxJSONProblems caps the problems --json lists per file.
const maxJSONProblems = 1000

func runValidate(env *Env, args []string) int {
	var c common
	fs := newFlagSet(env, "validate", "[flags] STREAM…",
		"Checks ASR streams against the ASR JSON Schema (docs/asr.schema.json) and the stream\n"+
			"invariants: the header first, seq dense from 1, id = r<seq> and unique, supersedes pointing\n"+
			"back to the latest record of the same entity, LF after every line, lineage consistent, and\n"+
			"declared losses covering what the stream contains. Prints each problem as file:line: message\n"+
			"and a summary per file. A STREAM is a file, - for stdin, or a session ID in the store.\n"+
			"Exits 1 if any stream is invalid or cannot be read.")
	registerStoreFlags(fs, &c)
	asJSON := fs.Bool("json", false, "print one JSON document: per file its summary and problems")
	maxLine := registerMaxLine(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(env.Stderr, "acptap validate: no stream given")
		return ExitUsage
	}
	type fileReport struct {
		File            string             `json:"file"`
		Valid           bool               `json:"valid"`
		Error           string             `json:"error,omitempty"`
		Summary         *asrcheck.Summary  `json:"summary,omitempty"`
		Problems        []asrcheck.Problem `json:"problems"`
		ProblemsOmitted int                `json:"problemsOmitted,omitempty"`
	}
	var reports []fileReport
	code := ExitOK
	for _, arg := range fs.Args() {
		name, r, err := openStream(env, &c, arg)
		if err != nil {
			code = ExitFailure
			if *asJSON {
				reports = append(reports, fileReport{File: arg, Error: oneLine(err), Problems: []asrcheck.Problem{}})
			} else {
				fmt.Fprintf(env.Stderr, "acptap validate: %s\n", oneLine(err))
			}
			continue
		}
		rep := fileReport{File: name, Problems: []asrcheck.Problem{}}
		sum, err := asrcheck.ValidateLimit(r, *maxLine, func(p asrcheck.Problem) {
			if *asJSON {
				if len(rep.Problems) < maxJSONProblems {
					rep.Problems = append(rep.Problems, p)
				} else {
					rep.ProblemsOmitted++
				}
				return
			}
			fmt.Fprintln(env.Stdout, problemLine(name, p))
		})
		r.Close()
		rep.Summary, rep.Valid = &sum, sum.Valid() && err == nil
		if err != nil {
			rep.Error = oneLine(err)
		}
		if !rep.Valid {
			code = ExitFailure
		}
		if *asJSON {
			reports = append(reports, rep)
			continue
		}
		if err != nil {
			fmt.Fprintf(env.Stderr, "acptap validate: %s: %s\n", name, oneLine(err))
		}
		fmt.Fprintln(env.Stdout, summaryLine(name, sum, err == nil))
	}
	if *asJSON {
		out := struct {
			Valid bool         `json:"valid"`
			Files []fileReport `json:"files"`
		}{Valid: code == ExitOK, Files: reports}
		enc := json.NewEncoder(env.Stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			fmt.Fprintf(env.Stderr, "acptap validate: %v\n", err)
			return ExitFailure
		}
	}
	return code
}

// problemLine renders file:line: message (file: message for the stream as
// a whole).
func problemLine(name string, p asrcheck.Problem) string {
	msg := p.Message
	if p.Severity == asrcheck.SeverityWarning {
		msg = "warning: " + msg
	}
	if p.Line == 0 {
		return name + ": " + msg
	}
	return fmt.Sprintf("%s:%d: %s", name, p.Line, msg)
}

// summaryLine is the verdict for one file.
func summaryLine(name string, s asrcheck.Summary, read bool) string {
	entities := "entities"
	if s.Entities == 1 {
		entities = "entity"
	}
	what := fmt.Sprintf("%d %s, %d %s", s.Records, plural(s.Records, "record"), s.Entities, entities)
	if s.SessionID != "" {
		what = fmt.Sprintf("session %s, %s", s.SessionID, what)
	}
	warn := ""
	if s.Warnings > 0 {
		warn = fmt.Sprintf(", %d %s", s.Warnings, plural(s.Warnings, "warning"))
	}
	switch {
	case !read:
		return fmt.Sprintf("%s: invalid: could not be read to the end (%s)", name, what)
	case s.Valid():
		return fmt.Sprintf("%s: valid (%s%s)", name, what, warn)
	}
	return fmt.Sprintf("%s: invalid: %d %s%s (%s)", name, s.Errors, plural(s.Errors, "error"), warn, what)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// registerStoreFlags adds the flags that locate a store for STREAMs given
// as session IDs.
func registerStoreFlags(fs interface {
	StringVar(p *string, name, value, usage string)
}, c *common) {
	fs.StringVar(&c.store, "store", "", "store root for a STREAM given as a session ID (default $XDG_DATA_HOME/acptap)")
	fs.StringVar(&c.config, "config", "", "config file (default $XDG_CONFIG_HOME/acptap/config.toml)")
}

// openStream opens a STREAM argument: "-" is stdin, an existing file is
// itself, anything else is a session ID, resolved to its stream in the
// store (sessions/<escaped id>/stream.asr.jsonl).
func openStream(env *Env, c *common, arg string) (string, io.ReadCloser, error) {
	if arg == "-" {
		return "<stdin>", io.NopCloser(env.Stdin), nil
	}
	st, err := os.Stat(arg)
	switch {
	case err == nil && st.IsDir():
		return "", nil, fmt.Errorf("%s is a directory, not a stream", arg)
	case err == nil:
		if err := notKind(arg, filekind.ASR); err != nil {
			return "", nil, err
		}
		f, err := os.Open(arg)
		return arg, f, err
	case !errors.Is(err, fs.ErrNotExist):
		return "", nil, err
	}
	root := c.store
	if root == "" {
		cfg, err := c.load()
		if err != nil {
			return "", nil, fmt.Errorf("%s: no such file; as a session ID: %w", arg, err)
		}
		root = cfg.Store
	}
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		return "", nil, fmt.Errorf("%s: no such file, and no store at %s to look it up as a session ID", arg, root)
	}
	s, err := store.Open(root)
	if err != nil {
		return "", nil, err
	}
	if cfg, err := c.load(); err == nil {
		finishPendingQuietly(env, cfg, s)
	}
	path := s.StreamPath(arg)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, fmt.Errorf("%s: no such file, and no session %q in the store %s", arg, arg, s.Root())
	}
	if err != nil {
		return "", nil, err
	}
	return path, f, nil
}

// notKind is the one-line error for a file of another kind acptap knows
// than want ("… is a wire log, not an ASR stream; try …"), or nil. Files
// it does not recognise are left to the command, which says what is wrong
// with them line by line.
func notKind(path string, want filekind.Kind) error {
	k, err := filekind.SniffFile(path)
	if err != nil || k == want || k == filekind.Unknown || k == filekind.Empty {
		return nil
	}
	// convert reads wire logs, gzip and logs of frames as ACP logs.
	if want == filekind.ACPLog && (k == filekind.Wire || k == filekind.Gzip) {
		return nil
	}
	return filekind.Wrong(path, k, want)
}
