// Package acpv1 is the ACP v1 plugin: it records live ACP v1 traffic
// (protocolVersion 1) and converts stored ACP v1 logs into ASR streams, one
// per ACP session, with the same record shapes as acpv2. It translates each
// v1 frame into the ACP v2 frames the recording engine (plugins/internal/acpasr)
// understands, with hints for what v2 cannot say (derived message ids,
// losses, audit-only fs traffic), and declares every loss in
// producer.lossy (docs/acpv1.md lists the categories and their reasons).
package acpv1
