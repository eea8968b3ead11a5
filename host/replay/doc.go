// Package replayserve is `acptap replay --serve`: a read-only ACP agent on
// stdio that lists the sessions of a store and replays one when the editor
// opens it, through a replay plugin the caller provides. It speaks the
// version the client asks for: ACP v2 (session/resume with replayFrom) or
// ACP v1 (session/load, v1.go). Nothing is executed; prompts and anything
// that would change a session are refused.
package replay
