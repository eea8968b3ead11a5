package asr

// CopiedFrom marks a record whose content was copied from a record of
// another session's stream (ASR-718): a fork's replayed history.
type CopiedFrom struct {
	// Session is the stream the content was copied from (the fork's parent).
	Session string `json:"session"`
	// Record is the id of that stream's record (its latest revision when
	// the copy was made).
	Record string `json:"record"`
	// Proof says how the copy is known: ProofNativeID, the native IDs
	// (messageId, toolCallId, …) are the same.
	Proof string `json:"proof"`
}

// ProofNativeID is the copiedFrom proof of a record whose native ID equals
// that of a record in the parent stream (ASR-718).
const ProofNativeID = "native_id"

// TSSourceSource marks a ts taken from a time the source itself carried
// (for replayed history, an update's _meta; ASR-707).
const TSSourceSource = "source"

// EvidenceNativeField is the lineage evidence of a link read from a field
// of the native protocol (ASR-718, ASR-721).
const EvidenceNativeField = "native_field"
