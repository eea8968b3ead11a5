package cli

import (
	"context"
	"fmt"

	"github.com/acptap/acptap/examples/agent/agentlib"
)

// hiddenAgent is the subcommand under which the acptap binary serves the
// bundled example agent, so the demo needs no separate build step.
const hiddenAgent = "__example-agent"

// runHidden serves internal subcommands that are not part of the interface.
func runHidden(env *Env, args []string) (int, bool) {
	switch args[0] {
	case hiddenAgent:
		// --respond-first answers session/prompt as soon as the prompt is
		// inserted, as most ACP v2 agents do; by default after the turn.
		opts := agentlib.Options{RespondFirst: len(args) > 1 && args[1] == "--respond-first"}
		if err := agentlib.ServeContext(context.Background(), env.Stdin, env.Stdout, opts); err != nil {
			fmt.Fprintf(env.Stderr, "example agent: %v\n", err)
			return ExitFailure, true
		}
		return ExitOK, true
	case hiddenFinish:
		return runFinish(env, args[1:]), true
	}
	return 0, false
}
