// Command agent is acptap's example ACP agent (v1 or v2, as the client asks): it speaks newline-delimited
// JSON-RPC on stdin/stdout and plays a scripted coding turn for every prompt
// (see package agentlib). Diagnostics go to stderr.
//
//	go run ./examples/agent [-delay 200ms] [-respond-first]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/acptap/acptap/internal/demo/agentlib"
)

func main() {
	delay := flag.Duration("delay", 0, "pause before each session/update of a turn")
	respondFirst := flag.Bool("respond-first", false, "answer session/prompt before the turn's updates instead of after them")
	quiet := flag.Bool("quiet", false, "no diagnostics on stderr")
	flag.Parse()

	opts := agentlib.Options{Delay: *delay, RespondFirst: *respondFirst}
	if !*quiet {
		opts.Log = os.Stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := agentlib.ServeContext(ctx, os.Stdin, os.Stdout, opts); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "acptap-example-agent:", err)
		os.Exit(1)
	}
}
