package otlp

// The attribute keys this package writes. The GenAI keys are pinned to
// semantic-conventions-genai v0.1.0 (the Go semconv packages dropped the
// agent keys); they are our constants so that an upstream rename never
// changes what we send without a change here.
const (
	SemconvGenAIVersion = "semantic-conventions-genai v0.1.0"

	AttrOperationName     = "gen_ai.operation.name"
	AttrAgentName         = "gen_ai.agent.name"
	AttrAgentVersion      = "gen_ai.agent.version"
	AttrConversationID    = "gen_ai.conversation.id"
	AttrRequestModel      = "gen_ai.request.model"
	AttrFinishReasons     = "gen_ai.response.finish_reasons"
	AttrUsageInputTokens  = "gen_ai.usage.input_tokens"
	AttrUsageOutputTokens = "gen_ai.usage.output_tokens"
	AttrToolName          = "gen_ai.tool.name"
	AttrToolCallID        = "gen_ai.tool.call.id"
	AttrToolCallArguments = "gen_ai.tool.call.arguments"
	AttrToolCallResult    = "gen_ai.tool.call.result"
	AttrInputMessages     = "gen_ai.input.messages"
	AttrErrorType         = "error.type"
	AttrSessionID         = "session.id"
	AttrServiceName       = "service.name"

	OpInvokeAgent = "invoke_agent"
	OpExecuteTool = "execute_tool"
)

// AEP-0005 LogRecord attributes.
const (
	AttrAEPAgentID     = "aep.agent_id"
	AttrAEPSessionID   = "aep.session_id"
	AttrAEPRunID       = "aep.run_id"
	AttrAEPStep        = "aep.step"
	AttrAEPEventID     = "aep.event_id"
	AttrAEPSequence    = "aep.sequence"
	AttrAEPEpoch       = "aep.epoch"
	AttrAEPCausationID = "aep.causation_id"
	AttrAEPCapture     = "aep.capture"
	AttrAEPSubject     = "aep.subject"
	AttrAEPSource      = "aep.source"

	// EventNamePrefix is prepended to the AEP type (AEP-0005 §3).
	EventNamePrefix = "dev.aep."
)

// acptap's own keys, for what the GenAI conventions do not name: the
// attention waits recorded as span events, and the ACP tool kind.
const (
	EventPermission    = "acptap.permission"
	EventElicitation   = "acptap.elicitation"
	AttrWaitOutcome    = "acptap.wait.outcome"
	AttrWaitOption     = "acptap.wait.option"
	AttrWaitDurationMS = "acptap.wait.duration_ms"
	AttrWaitKind       = "acptap.wait.kind"
	AttrToolKind       = "acptap.tool.kind"
	AttrToolUnfinished = "acptap.tool.unfinished"
	AttrRunTrigger     = "acptap.run.trigger"

	// ScopeName is the instrumentation scope of everything sent.
	ScopeName = "github.com/acptap/acptap/host/otlp"
)
