package aep

import (
	"strconv"

	"github.com/acptap/acptap/sdk"
)

// state maps a v2 state_update: a run starts when the session leaves idle
// (for running or requires_action) and ends when it returns to idle, by the
// stop reason. Repeated states and running ↔ requires_action are nothing:
// the permission or elicitation request stays the only source of
// attention.
func (c *conn) state(f *sdk.Frame, st *sess, u obj) []*draft {
	next, _ := str(u, "state")
	prev := st.state
	switch next {
	case "running", "requires_action":
		st.state = next
		if prev == "running" || prev == "requires_action" || st.openRun != "" {
			return nil
		}
		if len(st.unbound) > 0 {
			p := st.unbound[0]
			st.unbound[0] = nil // the prompt's params are not kept by the array
			st.unbound = st.unbound[1:]
			return []*draft{c.runStarted(st, runID(st.epoch, p.rpcID), "user", p, f.At)}
		}
		st.agentRuns++
		run := strconv.FormatInt(st.epoch, 10) + "-a" + strconv.Itoa(st.agentRuns)
		return []*draft{c.runStarted(st, run, "agent", nil, f.At)}
	case "idle":
		st.state = next
		if st.openRun == "" {
			return nil
		}
		stop, has := str(u, "stopReason")
		lvl := c.level("run.failed")
		typ, sev, data := c.stopTerminal(stop, has, child(u, "error"), lvl)
		if typ == "run.finished" {
			usageTokens(data, child(u, "usage"))
		}
		return []*draft{c.runTerminal(st, st.openRun, typ, sev, data, f.At)}
	}
	// "unknown" and vendor states say nothing about runs.
	return nil
}
