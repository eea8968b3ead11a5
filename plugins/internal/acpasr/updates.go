package acpasr

import (
	"encoding/json"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// sessionUpdate routes a session/update notification to its stream.
func (c *conn) sessionUpdate(f *sdk.Frame, m rpcMsg) *pending {
	id, st := m.params.id("sessionId")
	if st != valid {
		c.diag(sdk.SeverityError, "", "session/update without a sessionId", "not recorded: it belongs to no stream")
		return nil
	}
	u, st := m.params.object("update")
	if st != valid {
		c.diag(sdk.SeverityError, id, "session/update without an update object", "not recorded")
		return nil
	}
	c.streamFor(id, f).update(f, u, m.params.raw("update"))
	return nil
}

// update maps one session update by its kind. A kind not mapped, or a
// mapped kind too malformed to map, becomes an audit-only record with the
// update verbatim (ASR-710): an update is never dropped.
func (s *stream) update(f *sdk.Frame, u obj, raw json.RawMessage) {
	kind, st := u.str("sessionUpdate")
	if st != valid {
		s.c.diag(sdk.SeverityError, s.id, "session/update without a sessionUpdate kind", "not recorded: an audit record needs the kind for its type")
		return
	}
	s.src = ""
	if s.replaying {
		s.src = sourceTime(u)
	}
	defer func() { s.src = "" }()
	var ok bool
	switch kind {
	case "user_message", "user_message_chunk", "agent_message", "agent_message_chunk", "agent_thought", "agent_thought_chunk":
		ok = s.messageUpdate(f, kind, u)
	case "tool_call_update":
		ok = s.toolUpdate(f, u)
	case "tool_call_content_chunk":
		ok = s.toolChunk(f, u)
	case "state_update":
		ok = s.stateUpdate(f, u, raw)
	case "terminal_update":
		ok = s.terminalUpdate(f, u)
	case "terminal_output_chunk":
		ok = s.terminalChunk(f, u)
	case "plan_update":
		ok = s.planUpdate(f, u)
	case "compaction_update":
		ok = s.compactionUpdate(f, u)
	case "compaction_summary_chunk":
		ok = s.compactionChunk(f, u)
	case "usage_update":
		ok = s.usageUpdate(f, u)
	case "session_info_update":
		ok = s.sessionInfoUpdate(f, u)
	case "config_option_update":
		ok = s.configUpdate(f, u)
	case "notice":
		ok = s.notice(f, u)
	case "subagent_update":
		ok = s.subagentUpdate(f, u)
	case "session_message", "session_message_chunk":
		ok = s.sessionMessage(f, kind, u, raw)
	case "current_mode_update":
		if s.c.opts.ModeUpdates {
			ok = s.modeUpdate(f, u)
		}
	}
	if !ok {
		s.audit(f, kind, raw)
	}
}

// audit writes an audit-only record org.agent-session.acp/<kind> (ASR-710).
func (s *stream) audit(f *sdk.Frame, kind string, raw json.RawMessage) {
	s.record(&asr.Audit{
		Envelope:   asr.Envelope{Type: asr.AuditPrefix + kind},
		Provenance: asr.Provenance{Native: &asr.Native{Record: compact(raw)}},
	}, f)
}

// stateUpdate writes a state record. idle and requires_action end a turn:
// the entities still open are written first (ASR-705). Inside a replay
// only idle does: a replayed entity is compared with what was recorded
// once its replayed turn is over (ASR-717).
func (s *stream) stateUpdate(f *sdk.Frame, u obj, raw json.RawMessage) bool {
	state, st := u.str("state")
	if st != valid {
		s.c.diag(sdk.SeverityWarning, s.id, "state_update: state missing or not a string", "kept as an audit record")
		return false
	}
	rec := &asr.State{Envelope: asr.Envelope{Type: asr.TypeState}, State: state}
	switch _, st := u.str("stopReason"); st {
	case valid:
		rec.StopReason = compact(u.raw("stopReason"))
	case invalid:
		s.c.diag(sdk.SeverityWarning, s.id, "state_update: stopReason is not a string", "treated as absent, as ACP says")
	}
	switch _, st := u.object("error"); st {
	case valid:
		rec.Error = compact(u.raw("error"))
	case invalid:
		s.c.diag(sdk.SeverityWarning, s.id, "state_update: error is not an object", "left out")
	}
	for _, k := range s.c.opts.StateNative {
		if _, st := u.member(k); st != missing {
			rec.Native = &asr.Native{Record: compact(raw)}
			break
		}
	}
	switch {
	case state == "idle":
		s.flush()
		s.endTurn()
	case state == "requires_action" && !s.replaying:
		s.flush()
	}
	s.record(rec, f)
	return true
}
