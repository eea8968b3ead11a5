package otlp

import (
	"maps"
	"slices"
	"strings"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/acptap/acptap/sdk/aep"
)

// Agent is what the session's ASR stream says about the agent and model.
type Agent struct {
	Name, Version, Model string
}

// Tracer turns one session's AEP events, in order, into GenAI agent spans:
// one invoke_agent span per run (an ACP prompt turn, or work the agent
// started itself) and one execute_tool span per tool call, a child of its
// run's span; permission and elicitation waits are span events. A run's
// spans are complete when its terminal arrives, so they are returned then.
// Not safe for concurrent use.
type Tracer struct {
	// Info says what is known of the session's agent when spans are built.
	Info func(session string) Agent
	// Version is acptap's version (the instrumentation scope's).
	Version string

	sessions map[string]*traceSession
	// held are finished runs waiting for the session's agent to be known
	// (the ASR stream is written by another plugin, which may lag).
	held []heldTurn
}

type heldTurn struct {
	sid string
	s   *traceSession
	tu  *turn
}

// maxHeld bounds the finished runs held back for the agent's name; past
// it they are sent without it.
const maxHeld = 64

type traceSession struct {
	runs  map[string]*turn    // open runs by run id
	tools map[string]*toolRun // open tool calls by call id
	waits map[string]*wait    // attention requests by event id
	last  time.Time
	agent string
}

type spanCtx struct{ trace, span, parent []byte }

type turn struct {
	spanCtx
	run, trigger, prompt string
	start, end           time.Time
	finish, errType      string
	failed               bool
	usage                map[string]int64
	tools                []*toolRun
	waits                []*wait
	unfinished           bool
	rank                 int
}

type toolRun struct {
	spanCtx
	callID, name, kind string
	start, end         time.Time
	done, failed       bool
	errType            string
	args, result       any
	usage              map[string]int64
	waits              []*wait
	turn               *turn
	unfinished         bool
}

type wait struct {
	id, kind        string
	start           time.Time
	outcome, option string
	latency         int64
	hasLatency      bool
}

// Spans is what one event completed: the spans of a finished run (or of a
// tool call outside any run), with the rank they spool at.
type Spans struct {
	Session string
	Rank    int
	RS      *tracepb.ResourceSpans
}

// Feed takes the next event of its session (decoded, down-levelled) and
// returns the span context its log record belongs to and the spans that
// are complete: a finished run's are held back until the session's agent
// is known (Info), so that they carry its name.
func (t *Tracer) Feed(ev map[string]any) (trace, span []byte, done []Spans) {
	trace, span, done = t.feed(ev)
	if len(t.held) > 0 {
		done = append(done, t.release(false)...)
	}
	return trace, span, done
}

func (t *Tracer) feed(ev map[string]any) (trace, span []byte, done []Spans) {
	sid := str(ev, "session")
	if t.sessions == nil {
		t.sessions = map[string]*traceSession{}
	}
	s := t.sessions[sid]
	if s == nil {
		s = &traceSession{runs: map[string]*turn{}, tools: map[string]*toolRun{}, waits: map[string]*wait{}}
		t.sessions[sid] = s
	}
	at := eventTime(ev)
	if at.After(s.last) {
		s.last = at
	}
	s.agent = str(ev, "agent")
	id, run, typ := str(ev, "id"), str(ev, "run"), str(ev, "type")
	data := obj(ev, "data")
	if data == nil {
		data = map[string]any{}
	}
	tu := s.runs[run]
	ctxOf := func() ([]byte, []byte) {
		if tu != nil {
			return tu.trace, tu.span
		}
		return nil, nil
	}
	switch typ {
	case "run.started":
		if run == "" || tu != nil {
			break
		}
		tu = &turn{run: run, start: at, trigger: str(data, "trigger"), rank: aep.SeverityRank("notice"), usage: map[string]int64{}}
		if tr, parent := parseTraceparent(str(ev, "traceparent")); tr != nil {
			tu.trace, tu.parent = tr, parent
		} else {
			tu.trace = traceID(sid, run, id)
		}
		tu.span = spanID(sid, "run", run, id)
		if p, ok := data["prompt"].(string); ok && p != "" {
			tu.prompt = p
		}
		usageOf(data, tu.usage)
		s.runs[run] = tu
		return tu.trace, tu.span, nil
	case "run.finished", "run.cancelled", "run.failed":
		if tu == nil {
			return nil, nil, nil
		}
		tu.end = at
		switch typ {
		case "run.finished":
			tu.finish = str(data, "stop_reason")
		case "run.cancelled":
			tu.finish = "cancelled"
		case "run.failed":
			tu.failed = true
			tu.finish = str(data, "reason")
			tu.errType = str(obj(data, "error"), "type")
			if tu.errType == "" {
				tu.errType = tu.finish
			}
		}
		usageOf(data, tu.usage)
		tu.rank = max(tu.rank, aep.SeverityRank(Severity(ev)))
		delete(s.runs, run)
		t.held = append(t.held, heldTurn{sid, s, tu})
		return tu.trace, tu.span, nil
	case "tool.requested":
		tool := obj(data, "tool")
		call := str(tool, "call_id")
		if call == "" {
			call = str(ev, "subject")
		}
		if call == "" || s.tools[call] != nil {
			tr, sp := ctxOf()
			return tr, sp, nil
		}
		tr := &toolRun{callID: call, name: str(tool, "name"), kind: str(data, "kind"), start: at, turn: tu}
		tr.args = firstOf(data, "args", "args_redacted")
		if tu != nil {
			tr.trace, tr.parent = tu.trace, tu.span
			tu.tools = append(tu.tools, tr)
		} else if t, parent := parseTraceparent(str(ev, "traceparent")); t != nil {
			tr.trace, tr.parent = t, parent
		} else {
			tr.trace = traceID(sid, "tool", call, id)
		}
		tr.span = spanID(sid, "tool", call, id)
		s.tools[call] = tr
		return tr.trace, tr.span, nil
	case "tool.completed", "tool.failed", "x.acp.tool_call.update":
		call := str(obj(data, "tool"), "call_id")
		if call == "" {
			call = str(ev, "subject")
		}
		tr := s.tools[call]
		if tr == nil {
			tr, sp := ctxOf()
			return tr, sp, nil
		}
		if typ == "x.acp.tool_call.update" {
			return tr.trace, tr.span, nil
		}
		tr.end, tr.done = at, true
		if typ == "tool.failed" {
			tr.failed = true
			tr.errType = str(obj(data, "error"), "type")
			if tr.errType == "" {
				tr.errType = "tool_error"
			}
		}
		tr.result = firstOf(data, "result", "result_redacted")
		tr.usage = map[string]int64{}
		usageOf(data, tr.usage)
		delete(s.tools, call)
		if tr.turn == nil {
			return tr.trace, tr.span, []Spans{{Session: sid, Rank: max(aep.SeverityRank("notice"), aep.SeverityRank(Severity(ev))),
				RS: t.resourceSpans(sid, s, t.toolSpan(sid, tr))}}
		}
		return tr.trace, tr.span, nil
	case "attention.requested":
		w := &wait{id: id, kind: str(data, "kind"), start: at}
		s.waits[id] = w
		if tr := s.tools[str(ev, "subject")]; tr != nil {
			tr.waits = append(tr.waits, w)
			return tr.trace, tr.span, nil
		}
		if tu != nil {
			tu.waits = append(tu.waits, w)
		}
	case "attention.answered":
		if w := s.waits[str(ev, "subject")]; w != nil {
			w.option = str(obj(data, "answer"), "option")
			if w.outcome == "" {
				w.outcome = "answered"
			}
		}
	case "attention.resolved", "attention.timeout":
		if w := s.waits[str(ev, "subject")]; w != nil {
			w.outcome = str(data, "resolution")
			if typ == "attention.timeout" {
				w.outcome = "timeout"
			}
			if n, ok := num(data, "latency_ms"); ok {
				w.latency, w.hasLatency = n, true
			} else if !at.Before(w.start) {
				w.latency, w.hasLatency = at.Sub(w.start).Milliseconds(), true
			}
			delete(s.waits, w.id)
		}
	}
	tr, sp := ctxOf()
	return tr, sp, nil
}

// release builds the held runs whose agent is known (all of them when
// force is set, or when too many are held), in the order they finished.
func (t *Tracer) release(force bool) []Spans {
	var out []Spans
	force = force || t.Info == nil || len(t.held) > maxHeld
	known := map[string]bool{}
	keep := t.held[:0]
	for _, h := range t.held {
		ok, seen := known[h.sid]
		if !seen {
			ok = force || t.agent(h.sid).Name != ""
			known[h.sid] = ok
		}
		if ok {
			out = append(out, t.turnSpans(h.sid, h.s, h.tu))
		} else {
			keep = append(keep, h)
		}
	}
	t.held = keep
	return out
}

// Flush ends every run and tool call still open (the recorded session
// stopped mid-turn) at the session's last event, marked unfinished, and
// returns their spans, after those of the runs held back.
func (t *Tracer) Flush() []Spans {
	out := t.release(true)
	for _, sid := range slices.Sorted(maps.Keys(t.sessions)) {
		s := t.sessions[sid]
		for _, run := range slices.Sorted(maps.Keys(s.runs)) {
			tu := s.runs[run]
			tu.end, tu.unfinished = s.last, true
			out = append(out, t.turnSpans(sid, s, tu))
			delete(s.runs, run)
		}
		for _, call := range slices.Sorted(maps.Keys(s.tools)) {
			tr := s.tools[call]
			if tr.turn == nil {
				tr.end, tr.unfinished = s.last, true
				out = append(out, Spans{Session: sid, Rank: aep.SeverityRank("notice"), RS: t.resourceSpans(sid, s, t.toolSpan(sid, tr))})
			}
			delete(s.tools, call)
		}
		delete(t.sessions, sid)
	}
	return out
}

func firstOf(m map[string]any, keys ...string) any {
	for _, k := range keys {
		if v, ok := m[k]; ok && v != nil {
			return v
		}
	}
	return nil
}

func usageOf(data map[string]any, into map[string]int64) {
	for _, k := range []string{AttrUsageInputTokens, AttrUsageOutputTokens} {
		if n, ok := num(data, k); ok {
			into[k] = n
		}
	}
}

func (t *Tracer) agent(sid string) Agent {
	if t.Info == nil {
		return Agent{}
	}
	return t.Info(sid)
}

func (t *Tracer) resourceSpans(sid string, s *traceSession, spans ...*tracepb.Span) *tracepb.ResourceSpans {
	return &tracepb.ResourceSpans{Resource: resource(s.agent),
		ScopeSpans: []*tracepb.ScopeSpans{{Scope: scope(t.Version), Spans: spans}}}
}

func (t *Tracer) turnSpans(sid string, s *traceSession, tu *turn) Spans {
	ag := t.agent(sid)
	name := OpInvokeAgent
	if ag.Name != "" {
		name += " " + ag.Name
	}
	var a attrs
	a.str(AttrOperationName, OpInvokeAgent)
	a.str(AttrAgentName, ag.Name)
	a.str(AttrAgentVersion, ag.Version)
	a.str(AttrConversationID, sid)
	a.str(AttrSessionID, sid)
	a.str(AttrRequestModel, ag.Model)
	if tu.finish != "" {
		a.strs(AttrFinishReasons, tu.finish)
	}
	for _, k := range []string{AttrUsageInputTokens, AttrUsageOutputTokens} {
		if n, ok := tu.usage[k]; ok {
			a.int(k, n)
		}
	}
	a.str(AttrAEPRunID, tu.run)
	a.str(AttrRunTrigger, tu.trigger)
	if tu.prompt != "" {
		a.str(AttrInputMessages, jsonText([]any{map[string]any{"role": "user",
			"parts": []any{map[string]any{"type": "text", "content": tu.prompt}}}}))
	}
	if tu.failed {
		a.str(AttrErrorType, tu.errType)
	}
	if tu.unfinished {
		a = append(a, boolAttr("acptap.unfinished", true))
	}
	sp := &tracepb.Span{TraceId: tu.trace, SpanId: tu.span, ParentSpanId: tu.parent, Name: name,
		Kind: tracepb.Span_SPAN_KIND_CLIENT, StartTimeUnixNano: unixNano(tu.start), EndTimeUnixNano: unixNano(tu.end),
		Attributes: a, Events: waitEvents(tu.waits)}
	if tu.failed {
		sp.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: tu.finish}
	}
	spans := []*tracepb.Span{sp}
	for _, tr := range tu.tools {
		if !tr.done {
			tr.end, tr.unfinished = tu.end, true
			delete(s.tools, tr.callID)
		}
		spans = append(spans, t.toolSpan(sid, tr))
	}
	return Spans{Session: sid, Rank: tu.rank, RS: t.resourceSpans(sid, s, spans...)}
}

func (t *Tracer) toolSpan(sid string, tr *toolRun) *tracepb.Span {
	name := OpExecuteTool
	if tr.name != "" {
		name += " " + tr.name
	}
	var a attrs
	a.str(AttrOperationName, OpExecuteTool)
	a.str(AttrToolName, tr.name)
	a.str(AttrToolCallID, tr.callID)
	a.str(AttrToolKind, tr.kind)
	a.str(AttrConversationID, sid)
	a.str(AttrSessionID, sid)
	if tr.args != nil {
		a.str(AttrToolCallArguments, jsonText(tr.args))
	}
	if tr.result != nil {
		a.str(AttrToolCallResult, jsonText(tr.result))
	}
	for _, k := range []string{AttrUsageInputTokens, AttrUsageOutputTokens} {
		if n, ok := tr.usage[k]; ok {
			a.int(k, n)
		}
	}
	if tr.failed {
		a.str(AttrErrorType, tr.errType)
	}
	if tr.unfinished {
		a = append(a, boolAttr(AttrToolUnfinished, true))
	}
	sp := &tracepb.Span{TraceId: tr.trace, SpanId: tr.span, ParentSpanId: tr.parent, Name: name,
		Kind: tracepb.Span_SPAN_KIND_INTERNAL, StartTimeUnixNano: unixNano(tr.start), EndTimeUnixNano: unixNano(tr.end),
		Attributes: a, Events: waitEvents(tr.waits)}
	if tr.failed {
		sp.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: tr.errType}
	}
	return sp
}

// waitEvents records attention waits: acptap.permission for permission
// requests, acptap.elicitation for forms and the rest, at the request's
// time, with how it ended and how long it took.
func waitEvents(ws []*wait) []*tracepb.Span_Event {
	var out []*tracepb.Span_Event
	for _, w := range ws {
		name := EventElicitation
		if w.kind == "permission" {
			name = EventPermission
		}
		var a attrs
		a.str(AttrWaitKind, w.kind)
		outcome := w.outcome
		if outcome == "" {
			outcome = "pending"
		}
		a.str(AttrWaitOutcome, outcome)
		a.str(AttrWaitOption, w.option)
		if w.hasLatency {
			a.int(AttrWaitDurationMS, w.latency)
		}
		a.str(AttrAEPEventID, w.id)
		out = append(out, &tracepb.Span_Event{TimeUnixNano: unixNano(w.start), Name: name, Attributes: a})
	}
	return out
}

// isGenAI says whether a key is in the gen_ai namespace.
func isGenAI(k string) bool { return strings.HasPrefix(k, "gen_ai.") }
