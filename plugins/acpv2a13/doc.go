// Package acpv2a13 is the plugin for the newer ACP v2 draft, 2.0.0-alpha.13
// (the schema.unstable.json of @agentclientprotocol/sdk 2.3.0 and 2.4.0;
// still protocolVersion 2 on the wire). It records that draft's traffic as
// ASR streams, one per ACP session, through the recording engine
// plugins/internal/acpasr: frames the alpha.9 mapping already covers go to the engine
// unchanged, and the draft's additions are translated for it (a title set
// with session/set_title becomes a session_info_update; archive, status
// and the cancel requests become audit-only records; an archive ends an
// open session as session/close does) with the engine's knobs for what
// alpha.9 did not have (background work kept in the state records,
// terminal size, sender message ids). Every wire frame is checked against
// the draft's own schema (acpschema.V2Alpha13). README.md lists each
// mapping decision.
package acpv2a13
