package asr

// EntityKeyField names the field that identifies an entity of the given
// record type (messageId, callId, planId, terminalId, compactionId,
// requestId), or "" for a type without a key.
func EntityKeyField(typ string) string {
	switch typ {
	case TypeMessage:
		return "messageId"
	case TypeToolCall, TypeToolResult:
		return "callId"
	case TypePlan:
		return "planId"
	case TypeTerminal:
		return "terminalId"
	case TypeCompaction:
		return "compactionId"
	case TypePermission, TypeInputRequest:
		return "requestId"
	}
	return ""
}

// IsAudit reports whether t is an audit-only record type
// (org.agent-session.acp/<kind>, ASR-710).
func IsAudit(t string) bool { return len(t) >= len(AuditPrefix) && t[:len(AuditPrefix)] == AuditPrefix }

// IsVendor reports whether t is a vendor record type ("_"-prefixed).
func IsVendor(t string) bool { return len(t) > 1 && t[0] == '_' }

// OtherTypes are record types of the wider ASR format that the ACP mapping
// names but acptap never writes; Validate checks their envelope only.
var OtherTypes = []string{"inference", "vcs", "workspace_state", "checkpoint", "gap", "tombstone",
	"instructions", "turn_trigger", "hook", "memory_change", "delivery", "redaction"}
