// Package acpreplay is the ASR → ACP v2 replay engine (ASR-724…731): a
// stored stream becomes the session/update notifications an agent sends
// when a client resumes a session with replayFrom {type: "start"}, and the
// loss report (internal/replay) says what the stream held that they do not
// carry. It is plugins/internal/acpasr's counterpart: the acpv2 plugin's Replay is this
// engine, and a plugin for another ACP version replays through it and
// translates (acpv1, to ACP v1). It imports only sdk packages, the shared
// internal libraries (internal/jsonscan, internal/replay) and the standard
// library.
package acpreplay
