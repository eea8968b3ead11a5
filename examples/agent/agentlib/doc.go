// Package agentlib is acptap's bundled example ACP v2 agent (schema
// 2.0.0-alpha.9): newline-delimited JSON-RPC on a reader/writer pair, standard
// library only. It answers initialize, session/new, session/prompt,
// session/cancel and session/close, and plays a scripted, realistic coding
// turn for each prompt: state updates, thought and message chunks, a plan, tool
// calls with diff and text content, a permission request that waits for the
// client's answer, and usage. The demo runs it by re-executing the acptap
// binary; examples/agent wraps it as a stand-alone program.
package agentlib
