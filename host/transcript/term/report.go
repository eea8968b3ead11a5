package term

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/acptap/acptap/host/store"

	"github.com/acptap/acptap/internal/jsonl"
)

// Report writes what a store holds, as `acptap demo` prints it after a
// recording: each ASR stream and wire log with its lines by type, and how
// many AEP events there are. It reports false when the store has no ASR
// stream or one cannot be read. Record types are the files' text: they pass
// the sanitiser as a transcript does.
func Report(out io.Writer, dir string) bool {
	safe, _ := newTermSafe(out, false)
	defer safe.Flush()
	w := io.Writer(safe)
	ok := true
	streams, _ := filepath.Glob(filepath.Join(dir, "sessions", "*", "*.asr.jsonl"))
	sort.Strings(streams)
	if len(streams) == 0 {
		fmt.Fprintln(w, "\nASR streams: none written (see the log under logs/)")
		ok = false
	}
	for _, s := range streams {
		types, lines, err := countTypes(s)
		if err != nil {
			fmt.Fprintf(w, "\nASR stream %s: %v\n", s, err)
			ok = false
			continue
		}
		fmt.Fprintf(w, "\nASR stream %s\n  %d lines: %s\n", s, lines, formatCounts(types))
	}
	wires, _ := filepath.Glob(filepath.Join(store.WireDir(dir), "*.jsonl"))
	for _, f := range wires {
		types, lines, _ := countTypes(f)
		fmt.Fprintf(w, "\nWire log %s\n  %d lines: %s\n", f, lines, formatCounts(types))
	}
	aeps, _ := filepath.Glob(filepath.Join(dir, "aep", "acp", "*.jsonl"))
	total := 0
	for _, f := range aeps {
		_, lines, _ := countTypes(f)
		total += lines
	}
	if len(aeps) > 0 {
		fmt.Fprintf(w, "\nAEP events: %d in %d files under %s\n", total, len(aeps), filepath.Join(dir, "aep", "acp"))
	}
	return ok
}

func countTypes(path string) (map[string]int, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	counts := map[string]int{}
	lines := 0
	r := jsonl.NewReader(f, jsonl.DefaultMaxLine)
	for {
		line, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, 0, err
		}
		lines++
		var v struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(line, &v) != nil || v.Type == "" {
			v.Type = "(other)"
		}
		counts[v.Type]++
	}
	return counts, lines, nil
}

func formatCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
