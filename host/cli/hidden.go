package cli

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"

	"github.com/acptap/acptap/host/tee"

	"github.com/acptap/acptap/internal/demo/agentlib"
)

// hiddenAgent is the subcommand under which the acptap binary serves the
// bundled example agent, so the demo needs no separate build step.
const hiddenAgent = "__example-agent"

// hiddenWatchdog is the subcommand of the watchdog `record` starts beside
// the agent (tee.Watchdog): it kills the agent's process group when acptap
// dies without ending it.
const hiddenWatchdog = "__tee-watchdog"

// watchdog makes the watchdog command of the agent's process group.
func watchdog(env *Env) func(pgid int) *exec.Cmd {
	return func(pgid int) *exec.Cmd { return exec.Command(env.Self, hiddenWatchdog, strconv.Itoa(pgid)) }
}

// runHidden serves internal subcommands that are not part of the interface.
func runHidden(env *Env, args []string) (int, bool) {
	switch args[0] {
	case hiddenWatchdog:
		pgid := 0
		if len(args) > 1 {
			pgid, _ = strconv.Atoi(args[1])
		}
		return tee.Watchdog(pgid, env.Stdin), true
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
