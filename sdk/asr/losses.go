package asr

// Loss categories: the names a stream's producer.lossy and declaration
// records (recording, ASR-722) and a replay's loss report (ASR-731) use.
// They are defined here once, in the model, so a plugin, the host and the
// tools name the same category with the same constant; a vendor's own
// categories ("_vendor/…") are the vendor's. TestLossLiteralsDefinedOnce
// fails when one of these strings is written out anywhere else.

// Recording (ASR-722): the seed's categories.
const (
	// LossToolResultContent: ACP does not say what reached the model from
	// tools (ASR-714); applies when the stream has tool results.
	LossToolResultContent = "tool_result.content"
	// LossMessageAuthor: ACP does not tell human, harness and model
	// authors apart; always applies to ACP.
	LossMessageAuthor = "message.author"
	// LossInference: ACP has no per-call boundaries (model calls and their
	// usage); always applies to ACP, and a replay never carries them.
	LossInference = "inference"
	// LossUsage: ACP v2's per-call usage is not stable; always applies.
	LossUsage = "usage"
	// LossTimestamps: ACP has no per-entry times, only receipt times are
	// recorded (ASR-707); always applies, and a replay sends none of ts,
	// observedAt, createdAt.
	LossTimestamps = "timestamps"
	// LossReasoning: recording, non-text thought content was dropped;
	// replay, opaque reasoning, signatures and reasoning without text are
	// never sent.
	LossReasoning = "reasoning"
	// LossRevisionHistory: the recorder folded post-final changes (it
	// should not, ASR-706).
	LossRevisionHistory = "revision_history"
	// LossToolStatus: pending and in_progress tool call transitions are
	// not recorded; applies when the stream has tool calls.
	LossToolStatus = "_org.agent-session.acp/tool_status_transitions"
)

// Recording: acptap's own categories.
const (
	// LossCaptureGap: frames of the connection were not observed (a gap
	// in the wire log), so records may be missing or partial; a replay
	// from the capture cannot resend them either.
	LossCaptureGap = "_org.acptap/capture_gap"
	// LossUnmappedFrames: a plugin gave up before mapping every frame of
	// the wire log (the host declares it).
	LossUnmappedFrames = "_org.acptap/unmapped_frames"
	// LossNonconforming: a frame of the session does not conform to the
	// official ACP JSON Schema, so what was recorded from it is only what
	// could be mapped (a member of the wrong type, a required member
	// missing).
	LossNonconforming = "_org.acptap/nonconforming_frames"
	// LossControls: the client-initiated controls a tool call or terminal
	// advertises (ACP 2.0.0-alpha.13 capabilities.cancel): ASR has no
	// field for them. The cancel requests themselves are audit records.
	LossControls = "_org.acptap/controls"
)

// Recording from ACP v1 (the acpv1 plugin), beyond those of every ACP
// recording; docs/acpv1.md gives each one's reason.
const (
	// LossV1TurnState always applies: ACP v1 has no state_update. A turn's
	// end is known only from the session/prompt response (recorded as an
	// idle state with its stopReason); running and requires_action are
	// never reported. In a replay to ACP v1, the session's current state
	// is not sent (a v1 turn ends with the prompt's response).
	LossV1TurnState = "_org.acptap/v1_turn_state"
	// LossV1MessageBoundaries applies once a message id is derived: v1
	// prompts have no messageId and chunks need not carry one, so where a
	// message begins and ends is inferred (a change of chunk kind or of
	// messageId, or a turn's end). Two messages of one kind in a row
	// without ids are recorded as one.
	LossV1MessageBoundaries = "_org.acptap/v1_message_boundaries"
	// LossV1DiffOperations applies once a v1 diff is mapped: v1 diffs carry
	// no operation, only a path and full texts. add (no oldText) or modify
	// is inferred; a deletion, move or copy is recorded as a modify (or an
	// add).
	LossV1DiffOperations = "_org.acptap/v1_diff_operations"
	// LossV1TerminalOutput applies once a client-side terminal is created:
	// its output is seen only in the terminal/output responses the agent
	// asks for, so output after the last one, and output the client cut
	// (outputByteLimit, truncated), is not recorded.
	LossV1TerminalOutput = "_org.acptap/v1_terminal_output"
)

// Replay (ASR-731): the seed's list of what a replay does not carry
// (LossInference and LossTimestamps above are in it too).
const (
	LossVCS           = "vcs"             // commits
	LossWorkspace     = "workspace_state" // workspace state
	LossCheckpoint    = "checkpoint"
	LossGap           = "gap"
	LossTombstone     = "tombstone"
	LossDeclaration   = "declaration"   // declaration records (the stream's own losses: SourceLossy)
	LossInstructions  = "instructions"  // instruction records
	LossConfigHistory = "config_change" // the history of config_change (current config: session/resume's configOptions)
	LossStateHistory  = "state"         // the history of state (only the current state is sent)
	LossTurnTriggers  = "turn_triggers" // turn triggers, including a message's origin "prompt"
	LossPermission    = "permission"    // permission records (never asked again, ASR-726)
	LossInputRequest  = "input_request" // input_request records (never asked again)
	LossHook          = "hook"          // hook records
	LossMemoryChange  = "memory_change" // memory_change records
	LossDelivery      = "delivery"      // delivery records
	LossSenders       = "senders"       // senders and conversations: author, from, recipients, audience, conversation
	LossOffPath       = "off_path"      // off-path records and branch structure
	LossLineage       = "lineage"       // lineage and copy markers (header lineage, copiedFrom, subagent links)
	LossCapture       = "capture"       // capture states (capture fields, partial snapshots)
	LossRedaction     = "redaction"     // redaction records
)

// Replay: what this project's replayer also leaves out, with reasons of
// its own (LossReasoning above is one).
const (
	LossNotices      = "_org.acptap/notices"          // notices (ASR-730: not history)
	LossAudit        = "_org.acptap/audit_records"    // audit-only records (available commands, vendor updates, …)
	LossHistory      = "_org.acptap/history"          // earlier revisions of entities, earlier titles and usage values
	LossRedactedRoot = "_org.acptap/redacted_root"    // diffs, locations and cwds under a root whose path is null (ASR-729)
	LossUnreplayable = "_org.acptap/unreplayable"     // records replay cannot place: results without a call, changes without a cause, other roles, unreadable lines
	LossUnknownTypes = "_org.acptap/unknown_records"  // record types this replayer does not know
	LossUncommitted  = "_org.acptap/uncommitted_tail" // bytes after the last LF (not part of the stream)
	// LossAgentRequests: a replay from the capture does not send the
	// agent's permission and elicitation requests again.
	LossAgentRequests = "_org.acptap/agent_requests"
	// LossMissingWire: a replay from the capture found no wire log for
	// some of the stream's frames.
	LossMissingWire = "_org.acptap/missing_wire_log"
)

// Replay to ACP v1 (protocolVersion 1), on top of the categories of the
// ACP v2 replay it is made from: what ACP v1 cannot carry of the updates a
// v2 replay sends (LossV1TurnState above is one). docs/replay.md gives
// each one's reason.
const (
	// LossV1Terminals: v1 terminals are the client's (terminal/create);
	// an agent cannot show one the client did not create, so terminal
	// entities and the terminal items of tool calls are not sent.
	LossV1Terminals = "_org.acptap/v1_terminals"
	// LossV1Diffs: a v1 diff is one path with the file's full old and new
	// texts. A change recorded without them (a patch only), and what a v1
	// diff has no field for (the operation, beyond add or modify; file
	// and mime types; the patch), are not sent.
	LossV1Diffs = "_org.acptap/v1_diffs"
	// LossV1ToolStatus: v1 tool statuses are pending, in_progress,
	// completed and failed. cancelled is sent as failed; other and vendor
	// statuses are not sent (a v1 client shows the call pending).
	LossV1ToolStatus = "_org.acptap/v1_tool_status"
	// LossV1ToolKind: a vendor tool kind is sent as other.
	LossV1ToolKind = "_org.acptap/v1_tool_kind"
	// LossV1Plans: v1 has one plan per session, a list of entries; each
	// plan update replaces it. Plan IDs, plans of another type than
	// items, and entry statuses or priorities v1 lacks are not sent
	// (an entry with one is sent pending, or medium).
	LossV1Plans = "_org.acptap/v1_plans"
	// LossV1Content: content blocks of a type v1 does not have, and
	// messages without any block (v1 carries messages as chunks of one
	// block each), are not sent.
	LossV1Content = "_org.acptap/v1_content"
	// LossV1Chunks: v1 sends a message as chunks of one block each, and
	// a v1 client (and recorder) joins text chunks in a row into one
	// text: a message's adjacent text blocks are read back as one.
	LossV1Chunks = "_org.acptap/v1_chunks"
	// LossV1Invalid: an update the translation made that does not validate
	// against the ACP v1 schema is not sent (the report's omitted list
	// says why).
	LossV1Invalid = "_org.acptap/v1_invalid"
	// LossV1Compaction: v1 agents send compaction updates only to a client
	// that advertised session.compaction; to one that did not, `acptap
	// replay --serve` leaves them out.
	LossV1Compaction = "_org.acptap/v1_compaction"
)
