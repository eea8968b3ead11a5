package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/internal/demo/clientlib"
	"github.com/acptap/acptap/internal/jsonl"
	"github.com/acptap/acptap/internal/private"
)

func runDemo(env *Env, args []string) int {
	fs := newFlagSet(env, "demo", "[flags]",
		"Records the bundled example agent driven by a scripted client, through a real `acptap\n"+
			"record` subprocess, into a fresh store, twice: the client speaking ACP v2, then ACP v1 (the\n"+
			"agent negotiates either); then prints what was written. The client\n"+
			"configures an MCP server whose env, header and args carry secrets; the demo checks that\n"+
			"none of them reached the store. Exits 1 if anything went wrong.")
	storeDir := fs.String("store", "", "store to record into (default: a new directory under the system temp dir)")
	acp := fs.String("acp", "both", "the ACP versions the client speaks, one session each: 2, 1 or both")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	versions := map[string][]int{"both": {2, 1}, "2": {2}, "1": {1}}[*acp]
	if versions == nil {
		fmt.Fprintf(env.Stderr, "acptap demo: --acp %q: want 2, 1 or both\n", *acp)
		return ExitUsage
	}
	dir := *storeDir
	if dir == "" {
		d, err := os.MkdirTemp("", "acptap-demo-")
		if err != nil {
			fmt.Fprintf(env.Stderr, "acptap demo: %v\n", err)
			return ExitFailure
		}
		dir = d
	}
	work := filepath.Join(dir, "workspace")
	if err := private.MkdirAll(work); err != nil {
		fmt.Fprintf(env.Stderr, "acptap demo: %v\n", err)
		return ExitFailure
	}
	agent := []string{env.Self, "record", "--store", dir, "--", env.Self, hiddenAgent}
	names := []string{}
	for _, v := range versions {
		names = append(names, fmt.Sprintf("ACP v%d", v))
	}
	fmt.Fprintf(env.Stdout, "acptap demo: a scripted client talks to the bundled example agent through\n  %s\n"+
		"in %s\n\n", strings.Join(agent, " "), strings.Join(names, ", then in "))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, v := range versions {
		var agentErr bytes.Buffer
		sum, err := clientlib.Run(ctx, agent, clientlib.Options{Cwd: work, Stderr: &agentErr, ProtocolVersion: v})
		if err != nil {
			fmt.Fprintf(env.Stderr, "acptap demo: the ACP v%d session failed: %v\n%s", v, err, agentErr.String())
			return ExitFailure
		}
		fmt.Fprintf(env.Stdout, "Client (ACP v%d): agent %s %s, protocol %d, session %s, %d prompts (%s), %d session/update notifications\n",
			v, sum.AgentInfo.Name, sum.AgentInfo.Version, sum.ProtocolVersion, sum.SessionID, len(sum.StopReasons),
			strings.Join(sum.StopReasons, ", "), sum.TotalUpdates)
	}
	// The recording may have handed its mapping to a finisher: wait for it,
	// as any command reading the store does.
	c := common{store: dir}
	if cfg, err := c.load(); err == nil {
		if st, err := store.Open(dir); err == nil {
			finishPendingQuietly(env, cfg, st)
		}
	}
	ok := report(env.Stdout, dir)
	if leaks := findSecrets(dir, clientlib.Secrets); len(leaks) > 0 {
		fmt.Fprintf(env.Stdout, "\nMCP secrets found under the store: %s\n", strings.Join(leaks, ", "))
		ok = false
	} else {
		fmt.Fprintf(env.Stdout, "\nMCP secrets (env, headers, args) found under the store: none\n")
	}
	fmt.Fprintf(env.Stdout, "\nStore: %s\nTry:   acptap rebuild --store %s-rebuilt %s/wire/*.jsonl\n", dir, dir, dir)
	if !ok {
		return ExitFailure
	}
	return ExitOK
}

// report prints the streams, records by type, wire logs and AEP files.
func report(w io.Writer, dir string) bool {
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
	wires, _ := filepath.Glob(filepath.Join(dir, "wire", "*.jsonl"))
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

// findSecrets returns the files under dir that contain any of secrets.
func findSecrets(dir string, secrets []string) []string {
	var hits []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				hits = append(hits, path)
				break
			}
		}
		return nil
	})
	return hits
}
