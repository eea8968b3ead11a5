// Package acpasr is the ACP → ASR recording engine of the built-in plugins
// that record ACP: acpv2, acpv2a13 and acpv1 (internal to plugins/, so no
// part of the SDK: a vendor plugin writes its streams with sdk.Streams). It maps ACP v2
// traffic (schema 2.0.0-alpha.9) to ASR streams, one per ACP session, as
// the mapping seed (ASR-700…735) prescribes; a plugin for another protocol
// translates its frames into ACP v2 frames and feeds them in with hints
// for what ACP v2 cannot say (Session.MapTranslated).
//
// The engine is a deterministic function of its options, the start request
// and the frames: entities are folded by ACP's patch rule and written when
// final, and every record points back at its wire frames. Mapping problems
// are diagnostics, never errors; updates it cannot map are kept as
// audit-only records. Across connections it continues a session's stream
// from what the store sends (an index of fingerprints, not the lines), so a
// replayed history writes only what differs (ASR-717), and memory grows
// with the open entities, not with the session.
//
// Loss categories it declares beyond the seed's: "_org.acptap/capture_gap"
// (frames of the connection were not observed; a declaration in every
// stream open at the gap, and in the header of a stream first seen after
// one).
package acpasr
