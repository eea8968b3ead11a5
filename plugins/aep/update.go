package aep

import (
	"encoding/base64"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/aep"
)

// deltaKinds are the content streams suppressed by default and emitted as
// x.acp.<name>{delta} under the deltas opt-in: chunks, and (v2) the
// message upserts that carry whole content.
var deltaKinds = map[string]bool{
	"user_message_chunk": true, "agent_message_chunk": true, "agent_thought_chunk": true,
	"tool_call_content_chunk": true, "terminal_output_chunk": true, "compaction_summary_chunk": true,
	"session_message_chunk": true,
	"user_message":          true, "agent_message": true, "agent_thought": true, "session_message": true,
}

// update maps one session/update notification of session st. The members
// of u it reads, kind by kind, are listed in sparseKinds (fast.go): a
// member read here goes there too.
func (c *conn) update(f *sdk.Frame, st *sess, u, params obj) []*draft {
	kind, ok := str(u, "sessionUpdate")
	if !ok {
		c.diag(sdk.SeverityWarning, st.id, "session/update without a sessionUpdate string", "", f.Seq)
		return nil
	}
	if kind == "state_update" && !c.v2 {
		c.v2 = true // attached mid-stream or mislabelled: the shape says v2
	}
	if st.replaying > 0 {
		c.observeReplay(st, kind, u)
		return nil
	}
	tp := traceparent(u, params)
	var ds []*draft
	switch {
	case kind == "state_update":
		ds = c.state(f, st, u)
	case kind == "tool_call" || kind == "tool_call_update":
		ds = c.toolUpdate(f, st, kind, u)
	case kind == "plan" || kind == "plan_update":
		ds = []*draft{c.plan(st, u)}
	case kind == "usage_update":
		ds = []*draft{c.usage(st, u)}
	case kind == "compaction_update":
		ds = c.compaction(st, u)
	case deltaKinds[kind]:
		ds = c.delta(st, kind, u)
	default:
		d := c.newDraft(st, vendorType(kind), "debug")
		d.data = obj{}
		ds = []*draft{d}
	}
	for _, d := range ds {
		if d != nil && d.tp == "" {
			d.tp = tp
		}
	}
	return compactDrafts(ds)
}

func compactDrafts(ds []*draft) []*draft {
	out := ds[:0]
	for _, d := range ds {
		if d != nil {
			out = append(out, d)
		}
	}
	return out
}

// observeReplay keeps what a replayed history says (the state snapshot,
// known tools and compactions) without emitting: replay is not new
// activity.
func (c *conn) observeReplay(st *sess, kind string, u obj) {
	switch kind {
	case "state_update":
		if s, ok := str(u, "state"); ok {
			st.state = s
		}
	case "tool_call", "tool_call_update":
		id, _ := str(u, "toolCallId")
		if id == "" {
			return
		}
		if _, done := st.toolsDone[id]; done {
			return
		}
		if s, _ := str(u, "status"); isToolTerminal(s) {
			st.finishTool(id)
			return
		}
		if st.tools[id] == nil {
			st.tools[id] = &tool{name: toolName(u, "")}
		}
	case "compaction_update":
		if s, _ := str(u, "status"); s == "completed" {
			id, _ := str(u, "compactionId")
			st.compacted[id] = true
		}
	}
}

var unsafeKey = regexp.MustCompile(`[^a-z0-9_]+`)

// plan maps plan (v1) and plan_update (v2) to x.acp.plan.updated: entry
// counts by status only, since entries have no ids (never progress.task.*).
func (c *conn) plan(st *sess, u obj) *draft {
	d := c.newDraft(st, "x.acp.plan.updated", "debug")
	d.data = obj{}
	entries := list(u, "entries")
	if p := child(u, "plan"); p != nil {
		entries = list(p, "entries")
		if id, ok := str(p, "planId"); ok {
			d.data["plan_id"] = id
		}
	}
	for _, e := range entries {
		if s, ok := str(asObj(e), "status"); ok && s != "" {
			k := "entries_" + unsafeKey.ReplaceAllString(strings.ToLower(s), "_")
			n, _ := d.data[k].(int)
			d.data[k] = n + 1
		}
	}
	return d
}

// usage maps usage_update. The pinned v1 shape {usedTokens, outputTokens}
// becomes gen_ai.usage.*; the current shape {used, size, cost} is context
// occupancy, never gen_ai.usage.* (summing it downstream would overcount).
func (c *conn) usage(st *sess, u obj) *draft {
	d := c.newDraft(st, "x.acp.usage.updated", "debug")
	d.data = obj{}
	for acp, aepName := range map[string]string{
		"usedTokens": "gen_ai.usage.input_tokens", "outputTokens": "gen_ai.usage.output_tokens",
		"used": "context_used_tokens", "size": "context_window_tokens",
	} {
		if n, ok := u[acp]; ok && isNumber(n) {
			d.data[aepName] = n
		}
	}
	if cost := child(u, "cost"); cost != nil {
		out := obj{}
		if cur, ok := str(cost, "currency"); ok {
			out["currency"] = cur
		}
		if amt, ok := cost["amount"]; ok && isNumber(amt) {
			out["total"] = amt
		}
		d.data["cost"] = out
	}
	return d
}

// compaction maps compaction_update: session.compacted once per
// compactionId when it completes, x.acp.compaction.update otherwise.
func (c *conn) compaction(st *sess, u obj) []*draft {
	id, _ := str(u, "compactionId")
	status, _ := str(u, "status")
	if status == "completed" && !st.compacted[id] {
		st.compacted[id] = true
		d := c.newDraft(st, "session.compacted", "info")
		d.subject, d.data = id, obj{}
		return []*draft{d}
	}
	d := c.newDraft(st, "x.acp.compaction.update", "debug")
	d.subject, d.data = id, obj{}
	if status != "" {
		d.data["status"] = status
	}
	return []*draft{d}
}

// delta maps a content stream under the deltas opt-in: x.acp.<name>
// {delta} at the deltas ceiling (redacted by default), the text through
// the redaction pipeline. Nothing by default, and nothing without text.
func (c *conn) delta(st *sess, kind string, u obj) []*draft {
	if !c.s.deltas {
		return nil
	}
	level := c.s.ceiling("deltas")
	if level < aep.Redacted {
		return nil // a delta is free text: below redacted there is nothing to carry
	}
	var text string
	switch kind {
	case "terminal_output_chunk":
		if s, ok := str(u, "data"); ok {
			if b, err := base64.StdEncoding.DecodeString(s); err == nil && utf8.Valid(b) {
				text = string(b)
			}
		}
	default:
		text = textOf(u["content"])
	}
	if strings.TrimSpace(text) == "" {
		return nil
	}
	d := c.newDraft(st, vendorType(kind), "debug")
	d.level = level
	if level == aep.Redacted {
		text = c.s.redactor.Text(text)
	}
	d.data = obj{"delta": text}
	if id, ok := str(u, "messageId"); ok {
		d.subject = id
	}
	return []*draft{d}
}
