package aep

import (
	"time"

	"github.com/acptap/acptap/sdk/aep"
)

// runStarted opens a run: run.started with the prompt's digest at
// metadata and its text from redacted up.
func (c *conn) runStarted(st *sess, run, trigger string, p *prompt, at time.Time) *draft {
	st.runs[run] = at
	st.openRun = run
	d := c.newDraft(st, "run.started", "info")
	d.run, d.setKey = run, "run:"+run
	d.data = obj{"trigger": trigger}
	if p != nil {
		if blocks, ok := p.params["prompt"]; ok && blocks != nil {
			if dg, err := aep.Digest(blocks); err == nil {
				d.data["message_digest"] = dg
			}
			if text := textOf(blocks); text != "" {
				switch {
				case d.level == aep.Redacted:
					d.data["prompt"] = c.s.redactor.Text(text)
				case d.level == aep.Full:
					d.data["prompt"] = text
				}
			}
		}
		d.tp = traceparent(p.params)
	}
	return d
}

// runTerminal closes a run with one of run.finished, run.failed,
// run.cancelled; a run already closed gets nothing (one terminal per run).
func (c *conn) runTerminal(st *sess, run, typ, severity string, data obj, at time.Time) *draft {
	if run != "" {
		start, open := st.runs[run]
		if !open {
			return nil
		}
		delete(st.runs, run)
		if st.openRun == run {
			st.openRun = ""
		}
		if ms := at.Sub(start).Milliseconds(); ms >= 0 {
			data["duration_ms"] = ms
		}
	}
	d := c.newDraft(st, typ, severity)
	d.run, d.data, d.causeKey = run, data, "run:"+run
	if run != "" {
		d.release = []string{"run:" + run} // one terminal per run
	}
	return d
}

// stopTerminal maps a stop reason (and, for "error", the error object) to
// a run terminal's type, severity and data.
func (c *conn) stopTerminal(stop string, hasStop bool, errObj obj, level aep.Level) (string, string, obj) {
	switch stop {
	case "cancelled":
		return "run.cancelled", "notice", obj{"by": "user"}
	case "refusal":
		return "run.failed", "error", obj{"reason": "refusal"}
	case "error":
		return "run.failed", "error", obj{"reason": "error", "error": c.rpcError(errObj, level)}
	}
	if !hasStop {
		return "run.finished", "info", obj{}
	}
	return "run.finished", "info", obj{"stop_reason": stop}
}

// rpcError renders a JSON-RPC error object as an AEP error: the type is
// jsonrpc_<code>, the message (redacted-gated) passes the pipeline.
func (c *conn) rpcError(e obj, level aep.Level) obj {
	out := obj{"type": "error"}
	if code, ok := e["code"]; ok {
		out["type"] = "jsonrpc_" + idText(code)
	}
	if m, ok := str(e, "message"); ok && m != "" {
		switch level {
		case aep.Redacted:
			out["message"] = c.s.redactor.Text(m)
		case aep.Full:
			out["message"] = m
		}
	}
	return out
}

// usageTokens copies per-turn token counts (ACP Usage) to gen_ai.usage.*.
func usageTokens(data obj, usage obj) {
	for acp, genai := range map[string]string{"inputTokens": "gen_ai.usage.input_tokens", "outputTokens": "gen_ai.usage.output_tokens"} {
		if n, ok := usage[acp]; ok && isNumber(n) {
			data[genai] = n
		}
	}
}

func isNumber(v any) bool {
	_, ok := v.(jsonNumber)
	return ok
}
