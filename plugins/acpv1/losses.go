package acpv1

// Loss categories of ACP v1 beyond those of every ACP recording
// (acpasr.AlwaysLossy and the engine's own). docs/acpv1.md gives each
// one's reason.
const (
	// LossTurnState always applies: ACP v1 has no state_update. A turn's
	// end is known only from the session/prompt response (recorded as an
	// idle state with its stopReason); running and requires_action are
	// never reported.
	LossTurnState = "_org.acptap/v1_turn_state"
	// LossMessageBoundaries applies once a message id is derived: v1
	// prompts have no messageId and chunks need not carry one, so where a
	// message begins and ends is inferred (a change of chunk kind or of
	// messageId, or a turn's end). Two messages of one kind in a row
	// without ids are recorded as one.
	LossMessageBoundaries = "_org.acptap/v1_message_boundaries"
	// LossDiffOperations applies once a v1 diff is mapped: v1 diffs carry
	// no operation, only a path and full texts. add (no oldText) or modify
	// is inferred; a deletion, move or copy is recorded as a modify (or an
	// add).
	LossDiffOperations = "_org.acptap/v1_diff_operations"
	// LossTerminalOutput applies once a client-side terminal is created:
	// its output is seen only in the terminal/output responses the agent
	// asks for, so output after the last one, and output the client cut
	// (outputByteLimit, truncated), is not recorded.
	LossTerminalOutput = "_org.acptap/v1_terminal_output"
)
