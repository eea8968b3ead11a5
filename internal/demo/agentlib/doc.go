// Package agentlib is acptap's bundled example ACP agent: it negotiates the
// version the client asks for, ACP v1 (protocolVersion 1, what acpx and
// most clients speak; v1.go) or v2 (schema 2.0.0-alpha.9), and speaks
// newline-delimited JSON-RPC on a reader/writer pair, standard library only. It answers initialize, session/new, session/prompt,
// session/cancel and session/close, and plays a scripted, realistic coding
// turn for each prompt: state updates, thought and message chunks, a plan, tool
// calls with diff and text content, a permission request that waits for the
// client's answer, and usage. The demo runs it by re-executing the acptap
// binary; examples/agent wraps it as a stand-alone program.
package agentlib
