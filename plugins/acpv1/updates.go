package acpv1

import (
	"encoding/json"

	"github.com/acptap/acptap/internal/replay"
	"github.com/acptap/acptap/plugins/internal/acpasr"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// The _meta keys of a file change that keep a v1 diff's full texts.
const (
	MetaOldText = replay.MetaV1OldText
	MetaNewText = replay.MetaV1NewText
)

// planID is the one plan of a session: a v1 plan has no id, and each plan
// update replaces the whole plan.
const planID = replay.V1PlanID

// update translates a session/update notification. Kinds ACP v2 has with
// the same shape go to the engine unchanged.
func (t *translator) update(f *sdk.Frame, m rpc, sid string) []acpasr.Translated {
	pass := []acpasr.Translated{{Frame: *f}}
	u, ok := m.params.object("update")
	if !ok {
		return pass
	}
	kind, ok := u.str("sessionUpdate")
	if !ok {
		return pass
	}
	s := t.session(sid)
	s.updates = true
	switch kind {
	case "user_message_chunk", "agent_message_chunk", "agent_thought_chunk":
		return t.messageChunk(f, m, s, kind, u)
	case "tool_call", "tool_call_update":
		return t.toolCall(f, m, s, kind, u)
	case "plan":
		// plan → plan_update of the session's one plan (a full snapshot).
		if _, ok := u.array("entries"); !ok {
			return t.malformed(f, m, s, kind, "entries is not an array")
		}
		nu := obj{"sessionUpdate": rawString("plan_update"),
			"plan": marshal(map[string]json.RawMessage{"type": rawString("items"), "planId": rawString(planID), "entries": u["entries"]})}
		if meta, ok := u["_meta"]; ok {
			nu["_meta"] = meta
		}
		return []acpasr.Translated{{Frame: withUpdate(f, m, nu.encode())}}
	case "current_mode_update":
		if mode, ok := u.str("currentModeId"); ok {
			s.mode = mode
		}
	}
	return pass
}

// malformed keeps an update the translator cannot map as an audit-only
// record of its kind, verbatim (ASR-710).
func (t *translator) malformed(f *sdk.Frame, m rpc, s *session, kind, why string) []acpasr.Translated {
	t.diag(sdk.SeverityWarning, s.id, kind+": "+why, "kept as an audit record")
	return []acpasr.Translated{{Frame: dataFrame(*f, f.Dir, m.params["update"]), Hint: acpasr.Hint{Session: s.id, Audit: kind}}}
}

// messageChunk gives a chunk the id of the message it belongs to: its own
// messageId, or one derived from its position in the session's history.
func (t *translator) messageChunk(f *sdk.Frame, m rpc, s *session, kind string, u obj) []acpasr.Translated {
	content, ok := u["content"]
	if _, isObj := parseObj(content); !ok || !isObj {
		return t.malformed(f, m, s, kind, "content is not a content block")
	}
	if kind != "agent_thought_chunk" {
		if p := acpasr.ContentBlockProblem(content); p != "" {
			return t.malformed(f, m, s, kind, "content is not a content block ("+p+")")
		}
	}
	native, _ := u.str("messageId")
	msg := s.chunk(kind, native, func(id string) bool { return t.eng.HasPrompt(s.id, id) })
	if native == msg.id || regularUpdate(f) {
		return []acpasr.Translated{t.withChunkHint(s, *f, native, msg)}
	}
	nu := cloneObj(u)
	nu["messageId"] = rawString(msg.id)
	return []acpasr.Translated{t.withMessageHint(s, withUpdate(f, m, nu.encode()), msg)}
}

// toolCall maps tool_call (a creation) and tool_call_update to v2's
// tool_call_update upsert, so that they fold into one call (ASR-704); v1
// diffs become v2 diffs.
func (t *translator) toolCall(f *sdk.Frame, m rpc, s *session, kind string, u obj) []acpasr.Translated {
	if _, ok := u.str("toolCallId"); !ok {
		if kind == "tool_call" {
			return t.malformed(f, m, s, kind, "toolCallId missing or not a string")
		}
		return []acpasr.Translated{{Frame: *f}} // the engine diagnoses it
	}
	nu := cloneObj(u)
	changed := kind == "tool_call"
	nu["sessionUpdate"] = rawString("tool_call_update")
	var hint acpasr.Hint
	if items, ok := u.array("content"); ok {
		diffs := false
		for i, it := range items {
			if d, ok := v1Diff(it); ok {
				items[i], diffs = d, true
			}
		}
		if diffs {
			nu["content"] = array(items)
			changed = true
			hint = acpasr.Hint{Session: s.id, Lossy: []string{asr.LossV1DiffOperations}}
		}
	}
	if !changed {
		return []acpasr.Translated{{Frame: *f}}
	}
	return []acpasr.Translated{{Frame: withUpdate(f, m, nu.encode()), Hint: hint}}
}

// v1Diff maps a v1 diff ({type: diff, path, oldText?, newText}) to a v2
// diff with one change: the operation inferred (no oldText → add, else
// modify) and the full texts kept in the change's _meta.
func v1Diff(item json.RawMessage) (json.RawMessage, bool) {
	o, ok := parseObj(item)
	if !ok {
		return nil, false
	}
	if typ, _ := o.str("type"); typ != "diff" {
		return nil, false
	}
	path, ok1 := o.str("path")
	newText, ok2 := o["newText"]
	if !ok1 || !ok2 || !isString(newText) {
		return nil, false // not a v1 diff: the engine maps or reports it as it is
	}
	// The texts are kept as they came (JSON strings), not decoded.
	op := "add"
	meta := obj{MetaNewText: newText}
	if old, ok := o["oldText"]; ok && isString(old) {
		op = "modify"
		meta[MetaOldText] = old
	}
	change := obj{"operation": rawString(op), "path": rawString(path), "_meta": meta.encode()}
	return obj{"type": rawString("diff"), "changes": array([]json.RawMessage{change.encode()})}.encode(), true
}

// withUpdate is the notification f with its update replaced.
func withUpdate(f *sdk.Frame, m rpc, update json.RawMessage) sdk.Frame {
	params := cloneObj(m.params)
	params["update"] = update
	return rewrite(f, "params", params.encode())
}
