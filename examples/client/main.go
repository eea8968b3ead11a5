// Command client is acptap's scripted example ACP v2 client. It starts the
// agent command given after "--", runs initialize, session/new (with MCP
// servers carrying recognisable secrets), the prompts, answers permission
// requests, session/close, and prints a JSON summary (see package clientlib).
//
//	go run ./examples/client [flags] -- AGENT [ARGS...]
//	go run ./examples/client -- go run ./examples/agent
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/acptap/acptap/internal/demo/clientlib"
)

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ", ") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	var prompts, dirs stringList
	flag.Var(&prompts, "prompt", "a prompt to send (repeatable; default: two scripted prompts)")
	flag.Var(&dirs, "add-dir", "an additionalDirectories entry for session/new (repeatable)")
	cwd := flag.String("cwd", "", "session cwd (default: the current directory)")
	permission := flag.String("permission", "allow_once", "option kind selected in permission requests, or \"cancel\"")
	noMCP := flag.Bool("no-mcp", false, "send no MCP servers (default: two servers carrying secrets)")
	noClose := flag.Bool("no-close", false, "do not send session/close")
	summaryFile := flag.String("summary", "", "write the JSON summary to this file instead of stdout")
	verbose := flag.Bool("v", false, "print each session/update kind to stderr as it arrives")
	timeout := flag.Duration("timeout", 2*time.Minute, "give up after this long")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: %s [flags] -- AGENT [ARGS...]\n", os.Args[0])
		flag.PrintDefaults()
	}
	flag.Parse()
	argv := flag.Args()
	if len(argv) > 0 && argv[0] == "--" {
		argv = argv[1:]
	}
	if len(argv) == 0 {
		flag.Usage()
		os.Exit(2)
	}

	opts := clientlib.Options{
		Prompts: prompts, Cwd: *cwd, AdditionalDirectories: dirs,
		Permission: *permission, SkipClose: *noClose,
	}
	if *noMCP {
		opts.MCPServers = []clientlib.MCPServer{}
	}
	if *verbose {
		opts.OnUpdate = func(_ string, u json.RawMessage) {
			var h struct {
				SessionUpdate string `json:"sessionUpdate"`
			}
			_ = json.Unmarshal(u, &h)
			fmt.Fprintln(os.Stderr, "update:", h.SessionUpdate)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()

	sum, err := clientlib.Run(ctx, argv, opts)
	out, _ := json.MarshalIndent(sum, "", "  ")
	out = append(out, '\n')
	if *summaryFile != "" {
		if werr := os.WriteFile(*summaryFile, out, 0o644); werr != nil {
			fmt.Fprintln(os.Stderr, "acptap-example-client:", werr)
			os.Exit(1)
		}
	} else {
		os.Stdout.Write(out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "acptap-example-client:", err)
		os.Exit(1)
	}
}
