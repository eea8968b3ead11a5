// Package replay is acptap's replay of recorded sessions, all of it:
// starting the replay plugin a configuration names (Plugins.Launch), the
// replay of an ASR stream as ACP lines through it (Stream, ASR-724…731), the
// byte-level resend of the captured frames from the wire logs the stream
// points to, found by the store's layout (Capture, ASR-733), the round trip
// that records the replay again through the pipeline and compares
// (RunRoundTrip, ASR-732), and `replay --serve`, a read-only ACP agent on
// stdio that lists a store's sessions and replays one when the editor
// opens it (Server, Plugins.Serve). The server speaks the version the
// client asks for: ACP v2 (session/resume with replayFrom) or ACP v1
// (session/load, serve_v1.go); nothing is executed, and prompts and
// anything that would change a session are refused. The JSON-RPC is
// internal/jsonrpc's. host/cli only parses the flags and calls in here.
package replay
