package logimport

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
)

// Totals sum the results of several inputs.
type Totals struct {
	converted, existed, failed int
	frames, skipped, events    int
	records                    int
	sessions                   map[string]bool
}

func (t *Totals) Add(r *Result) {
	if r.Existed {
		t.existed++
		return
	}
	t.converted++
	t.frames += r.Frames()
	t.skipped += r.SkippedLines
	t.events += r.AEPEvents()
	t.records += r.ASRRecords()
	if t.sessions == nil {
		t.sessions = map[string]bool{}
	}
	for _, s := range r.Sessions {
		t.sessions[s] = true
	}
}

// Fail counts an input that could not be converted.
func (t *Totals) Fail() { t.failed++ }

// Print writes the totals line.
func (t *Totals) Print(w io.Writer) {
	fmt.Fprintf(w, "total: %d converted, %d already converted, %d failed; %s, %s, %s, %s, %s\n",
		t.converted, t.existed, t.failed, counted(len(t.sessions), "session"), counted(t.frames, "frame"),
		counted(t.records, "ASR record"), counted(t.events, "AEP event"), counted(t.skipped, "skipped line"))
}

// WriteSummary writes what converting one input did, paths relative to
// the store's root.
func (r *Result) WriteSummary(w io.Writer, root string) {
	name := r.Input
	if name == "-" {
		name = "(stdin)"
	}
	rel := func(p string) string {
		if s, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(s, "..") {
			return s
		}
		return p
	}
	if r.Existed {
		fmt.Fprintf(w, "%s: already converted (%s); skipped — --force converts it again\n", name, rel(r.WirePath))
		return
	}
	kind := r.Source.Format
	if r.Source.Gzip {
		kind += ", gzip"
	}
	fmt.Fprintf(w, "%s: %s → %s\n", name, kind, rel(r.WirePath))
	fmt.Fprintf(w, "  %s → %s (%d c2a, %d a2c)", counted(r.Lines, "line"), counted(r.Frames(), "frame"), r.FramesC2A, r.FramesA2C)
	if r.Gaps > 0 {
		fmt.Fprintf(w, ", %s", counted(r.Gaps, "gap"))
	}
	if r.Synthesized > 0 {
		fmt.Fprintf(w, ", %d synthesized (initialize exchange)", r.Synthesized)
	}
	fmt.Fprintln(w)
	var times []string
	for _, k := range []TimeKind{TimeReceived, TimeSource, TimeSynthetic} {
		if n := r.Times[k]; n > 0 {
			times = append(times, fmt.Sprintf("%d %s", n, k))
		}
	}
	if len(times) > 0 {
		note := ""
		if r.Times[TimeSynthetic] > 0 {
			note = " (the input gave none: at is 1970-01-01T00:00:00Z + the line number in ms)"
		}
		fmt.Fprintf(w, "  times: %s%s\n", strings.Join(times, ", "), note)
	}
	fmt.Fprintf(w, "  sessions: %d", len(r.Sessions))
	if len(r.Sessions) > 0 {
		fmt.Fprintf(w, " (%s)", clipList(r.Sessions, 5))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  plugins: %s\n", orDash(strings.Join(r.Plugins, ", ")))
	if r.ASRStreams == 0 && r.ASRRecords() == 0 {
		why := ""
		if !slices.Contains(r.Plugins, "acpv1") {
			why = " (the acpv1 plugin is not attached: it is not built in or configured)"
		}
		fmt.Fprintf(w, "  ASR: no streams%s\n", why)
	} else {
		fmt.Fprintf(w, "  ASR: %s, %s: %s\n", counted(r.ASRStreams, "stream"), counted(r.ASRRecords(), "record"), byCount(r.ASRTypes, 0))
	}
	fmt.Fprintf(w, "  AEP: %s", counted(r.AEPEvents(), "event"))
	if r.AEPEvents() > 0 {
		fmt.Fprintf(w, ": %s", byCount(r.AEPTypes, 6))
	}
	fmt.Fprintln(w)
	if len(r.Losses) > 0 {
		fmt.Fprintf(w, "  losses declared: %s\n", strings.Join(r.Losses, ", "))
	} else {
		fmt.Fprintln(w, "  losses declared: none")
	}
	if d := r.Diagnostics; len(d) > 0 {
		fmt.Fprintf(w, "  plugin diagnostics: %s (see the log)\n", byCount(d, 0))
	}
	if r.SkippedLines > 0 {
		fmt.Fprintf(w, "  skipped lines: %d (not failures): %s\n", r.SkippedLines, byCount(r.SkipReasons, 0))
		for _, s := range r.SkipExamples {
			fmt.Fprintf(w, "    %s:%d: %s\n", name, s.Line, s.Reason)
		}
		if more := r.SkippedLines - len(r.SkipExamples); more > 0 {
			fmt.Fprintf(w, "    … and %d more\n", more)
		}
	}
	for _, s := range r.Streams {
		fmt.Fprintf(w, "  wrote %s\n", rel(s))
	}
	for _, b := range r.Replaced {
		fmt.Fprintf(w, "  (previous file kept as %s)\n", rel(b))
	}
}

// byCount lists counts, largest first: "a 3, b 1"; with max > 0, only the
// first max.
func byCount(m map[string]int, max int) string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int {
		if c := cmp.Compare(m[b], m[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	more := 0
	if max > 0 && len(keys) > max {
		keys, more = keys[:max], len(keys)-max
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	if more > 0 {
		parts = append(parts, fmt.Sprintf("… %d more types", more))
	}
	return strings.Join(parts, ", ")
}

func clipList(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(", … %d more", len(items)-n)
}

// counted is "1 frame", "2 frames".
func counted(n int, word string) string {
	if n != 1 {
		word += "s"
	}
	return fmt.Sprintf("%d %s", n, word)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
