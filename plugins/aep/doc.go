// Package aep maps ACP traffic, v1 and v2 (schema 2.0.0-alpha.9), to AEP
// 0.1 events, one event log per ACP session: ACP v1 exactly as AEP-0002
// Annex A.13 pins it (conformance/fixtures/mappings/acp.json), ACP v2 by
// the mapping our AEP digest proposes (§9), both in the spirit of the ACP
// bridge design record. The tee observes the editor's permission gate and
// form requests read-only.
//
// The plugin is a deterministic function of its start request (config,
// plus the environment it folds in at Start: see Config) and the frames:
// event time is the frame's receipt time, event ids are ULIDs derived from
// (connection, wire seq, batch index, position in the frame, type), epoch is
// the number of earlier connections that observed the session (the host's
// session frames), and seq counts from 0 per session per connection, so
// (epoch, seq) never regresses across restarts of the tee.
package aep
