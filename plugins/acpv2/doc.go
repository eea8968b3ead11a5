// Package acpv2 is the ACP v2 (schema 2.0.0-alpha.9) plugin: it records ACP
// v2 traffic as ASR streams, one per ACP session, through the recording
// engine plugins/internal/acpasr (ASR-700…735), and replays ASR streams as ACP v2
// session/update notifications (ASR-724…731). It owns its Info, its
// configuration section and the replay; the mapping itself is the
// engine's.
package acpv2
