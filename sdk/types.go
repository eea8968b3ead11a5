package sdk

import "time"

// Direction says which way a frame travelled.
type Direction uint8

const (
	// C2A is client → agent (the editor's writes to the agent's stdin).
	C2A Direction = 1
	// A2C is agent → client (the agent's stdout).
	A2C Direction = 2
)

// String returns the wire-log spelling: "c2a" or "a2c".
func (d Direction) String() string {
	switch d {
	case C2A:
		return "c2a"
	case A2C:
		return "a2c"
	}
	return "unknown"
}

// ParseDirection parses "c2a" or "a2c".
func ParseDirection(s string) (Direction, bool) {
	switch s {
	case "c2a":
		return C2A, true
	case "a2c":
		return A2C, true
	}
	return 0, false
}

// FrameKind distinguishes observed lines from gaps in observation.
type FrameKind uint8

const (
	// KindLine is one line of the wire, without its LF.
	KindLine FrameKind = 1
	// KindGap stands for frames the host could not observe.
	KindGap FrameKind = 2
	// KindSession tells the mapper, before the first frame that names a
	// session on this connection, what the store already knows of it.
	KindSession FrameKind = 3
)

// Frame is one observed line (or one element of a JSON-RPC batch line), or a
// gap. Frames arrive in wire-log order.
type Frame struct {
	Kind FrameKind
	// Seq is the wire-log sequence number; the elements of a batch share it.
	Seq uint64
	Dir Direction
	// At is the receipt time (informational; file order is authoritative).
	At time.Time
	// Data is the line's bytes without LF; it may be invalid UTF-8 or not
	// JSON at all. For a batch element it is that element only.
	Data []byte
	// BatchIndex and BatchSize locate a batch element; BatchSize is 0 when
	// the line was not a batch.
	BatchIndex, BatchSize int
	// ReplyTo is the seq of the request this response answers, joined by
	// (direction, id); ReplyToMethod is that request's method. Zero and ""
	// when the frame is not a response or no request matched.
	ReplyTo       uint64
	ReplyToMethod string
	// Gap describes a KindGap frame.
	Gap Gap
	// Session describes a KindSession frame.
	Session *SessionInfo

	// rpc caches the JSON-RPC head (see RPC).
	rpc *rpcCache
}

// SessionInfo is what the host knows of a session when this connection
// first names it. The host records it in the wire log, so a rebuild sees
// the same values.
type SessionInfo struct {
	ID string
	// Connections counts the earlier connections that observed the session
	// (0 for a session this connection created). It is the <n> of derived
	// IDs (ASR-716) and the AEP epoch.
	Connections int
	// Prior holds the ASR stream the plugin continues for the session, as
	// already written (header first), one line per element, without LFs;
	// empty when none: the session's primary stream (stream.asr.jsonl) for
	// the primary plugin and for a plugin that writes no ASR; for another
	// plugin that writes ASR, its own stream (<plugin>.asr.jsonl).
	Prior [][]byte
}

// Gap is a run of frames that were not observed.
type Gap struct {
	Frames uint64
	Bytes  uint64
	Reason string
}

// OutputKind says what an Output carries.
type OutputKind uint8

const (
	// ASRHeader is the header line of an ASR stream (one per session).
	ASRHeader OutputKind = 1
	// ASRRecord is one record line of an ASR stream.
	ASRRecord OutputKind = 2
	// AEPEvent is one AEP event envelope.
	AEPEvent OutputKind = 3
	// Diagnostic reports a mapping problem; mapping problems are data, not errors.
	Diagnostic OutputKind = 4
	// ACPFrame is one ACP JSON-RPC line (replay).
	ACPFrame OutputKind = 5
)

// String names the kind.
func (k OutputKind) String() string {
	switch k {
	case ASRHeader:
		return "asr-header"
	case ASRRecord:
		return "asr-record"
	case AEPEvent:
		return "aep-event"
	case Diagnostic:
		return "diagnostic"
	case ACPFrame:
		return "acp-frame"
	}
	return "unknown"
}

// Severity grades a diagnostic.
type Severity uint8

const (
	SeverityInfo    Severity = 1
	SeverityWarning Severity = 2
	SeverityError   Severity = 3
)

// String names the severity.
func (s Severity) String() string {
	switch s {
	case SeverityInfo:
		return "info"
	case SeverityWarning:
		return "warning"
	case SeverityError:
		return "error"
	}
	return "unknown"
}

// Output is one thing a mapper produced.
type Output struct {
	Kind OutputKind
	// Session is the ACP sessionId the output belongs to ("" for the connection).
	Session string
	// JSON is one JSON value without LF (headers, records, events, frames).
	JSON []byte
	// FrameSeqs are the wire seqs the output came from.
	FrameSeqs []uint64
	// Diagnostics only.
	Severity Severity
	Summary  string
	Detail   string
}

// Diag builds a diagnostic output.
func Diag(sev Severity, session, summary, detail string, seqs ...uint64) Output {
	return Output{Kind: Diagnostic, Session: session, Severity: sev, Summary: summary, Detail: detail, FrameSeqs: seqs}
}
