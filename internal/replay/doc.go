// Package replay is the contract between an ASR → ACP replayer and its
// callers: the loss report a replay returns (ASR-731) and the round-trip
// check of ASR-732, which compares the context view of a stream with the
// context view of the recording of its replay, entity by entity, allowing
// only the loss categories the report names. It imports only sdk/asr and
// the standard library, so plugins and the host can both use it.
package replay
