package cli

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/host/transcript/term"
	"github.com/acptap/acptap/internal/demo/clientlib"
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
	ok := term.Report(env.Stdout, dir)
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
