package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/acptap/acptap/host/sessions"
	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/host/transcript/term"
)

func runSessions(env *Env, args []string) int {
	var c common
	fs := newFlagSet(env, "sessions", "[flags]",
		"Lists every recorded session of the store, newest activity first: its ID, agent, protocol\n"+
			"revision, when it started and was last active, connections, turns (prompts), records,\n"+
			"declared losses, failures (failed prompts, authentication, requests) and size; then the\n"+
			"connections that started no session (the agent refused initialize, authentication or\n"+
			"session/new), with the errors it answered. Times are local. Exits 1 if a session\n"+
			"could not be read (it is named on stderr).")
	registerStoreFlags(fs, &c)
	asJSON := fs.Bool("json", false, "print one JSON document: {\"sessions\": […], \"unstarted\": […]}")
	agent := fs.String("agent", "", "only sessions whose agent name contains `TEXT` (any case)")
	since := fs.String("since", "", "only sessions active on or after `DATE` (YYYY-MM-DD or RFC 3339)")
	until := fs.String("until", "", "only sessions started before `DATE` (YYYY-MM-DD: before the end of that day)")
	date := fs.String("date", "", "only sessions started or active on `DAY` (YYYY-MM-DD)")
	cwd := fs.String("cwd", "", "only sessions whose workspace is `DIR` or below it")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "acptap sessions: unexpected argument %q (see `acptap sessions --help`)\n", fs.Arg(0))
		return ExitUsage
	}
	filter := sessions.Filter{Agent: *agent, Cwd: *cwd}
	var err error
	if filter.Since, err = parseDate(*since, false); err != nil {
		fmt.Fprintf(env.Stderr, "acptap sessions: --since: %s\n", err)
		return ExitUsage
	}
	if filter.Until, err = parseDate(*until, true); err != nil {
		fmt.Fprintf(env.Stderr, "acptap sessions: --until: %s\n", err)
		return ExitUsage
	}
	if *date != "" {
		day, err := parseDate(*date, false)
		if err != nil {
			fmt.Fprintf(env.Stderr, "acptap sessions: --date: %s\n", err)
			return ExitUsage
		}
		filter.Since, filter.Until = day, day.AddDate(0, 0, 1)
	}
	root := c.store
	if root == "" {
		cfg, err := c.load()
		if err != nil {
			fmt.Fprintf(env.Stderr, "acptap sessions: %s\n", oneLine(err))
			return ExitFailure
		}
		root = cfg.Store
	}
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		fmt.Fprintf(env.Stderr, "acptap sessions: no store at %s\n", root)
		return ExitFailure
	}
	st, err := store.Open(root)
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap sessions: %s\n", oneLine(err))
		return ExitFailure
	}
	list, probs, err := sessions.List(st, filter)
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap sessions: %s\n", oneLine(err))
		return ExitFailure
	}
	unstarted, uprobs, err := sessions.Unstarted(st, filter)
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap sessions: %s\n", oneLine(err))
		return ExitFailure
	}
	if *asJSON {
		if list == nil {
			list = []sessions.Session{}
		}
		if unstarted == nil {
			unstarted = []sessions.Connection{}
		}
		b, _ := json.MarshalIndent(map[string]any{"sessions": list, "unstarted": unstarted}, "", "  ")
		fmt.Fprintf(env.Stdout, "%s\n", b)
	} else {
		printSessions(env, list, unstarted)
	}
	code := ExitOK
	for _, p := range append(probs, uprobs...) {
		fmt.Fprintf(env.Stderr, "acptap sessions: %s: %s\n", p.ID, oneLine(p.Err))
		code = ExitFailure
	}
	return code
}

func printSessions(env *Env, list []sessions.Session, unstarted []sessions.Connection) {
	if len(list) == 0 && len(unstarted) == 0 {
		fmt.Fprintln(env.Stdout, "no sessions")
		return
	}
	if len(list) > 0 {
		tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "SESSION\tAGENT\tREVISION\tSTARTED\tLAST ACTIVITY\tCONN\tTURNS\tRECORDS\tLOSSES\tFAILED\tSIZE")
		for _, s := range list {
			ag := strings.TrimPrefix(s.Agent, "org.agent-session.acp.")
			if ag == "" {
				ag = "-"
			}
			if s.AgentVersion != "" {
				ag += " " + s.AgentVersion
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\n", s.ID, ag, dash(s.Revision),
				localTime(s.Started), localTime(s.LastActivity), s.Connections, s.Turns, s.Records,
				len(s.Losses), s.Failures, bytesHuman(s.Size))
		}
		tw.Flush()
	}
	if len(unstarted) > 0 {
		if len(list) > 0 {
			fmt.Fprintln(env.Stdout)
		}
		fmt.Fprintln(env.Stdout, "Connections that started no session:")
		for _, c := range unstarted {
			why := "no session was named"
			if len(c.Failures) > 0 {
				why = strings.Join(c.Failures, "; ")
			}
			fmt.Fprintf(env.Stdout, "  %s  %s  %s  %s\n    `acptap show %s` shows its frames\n",
				c.ID, localTime(c.Started), strings.Join(c.Agent, " "), why, c.Wire)
		}
	}
}

func localTime(t time.Time) string { return term.LocalTime(t) }

// parseDate reads YYYY-MM-DD (local midnight; with endOfDay the next
// midnight) or an RFC 3339 time; "" is the zero time.
func parseDate(s string, endOfDay bool) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.ParseInLocation("2006-01-02", s, time.Local); err == nil {
		if endOfDay {
			t = t.AddDate(0, 0, 1)
		}
		return t, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither YYYY-MM-DD nor an RFC 3339 time", s)
	}
	return t, nil
}
