package asr

// Loss categories of the model that the validator knows (ASR-722).
const (
	LossToolResultContent = "tool_result.content"
	LossMessageAuthor     = "message.author"
	LossInference         = "inference"
	LossUsage             = "usage"
	LossTimestamps        = "timestamps"
	LossReasoning         = "reasoning"
	LossRevisionHistory   = "revision_history"
	LossToolStatus        = "_org.agent-session.acp/tool_status_transitions"
	// LossCaptureGap is acptap's: frames were not observed (a capture gap).
	LossCaptureGap = "_org.acptap/capture_gap"
	// LossUnmappedFrames is acptap's: a plugin gave up before mapping every
	// frame of the wire log (the host declares it).
	LossUnmappedFrames = "_org.acptap/unmapped_frames"
)
