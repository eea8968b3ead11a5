// Package logimport turns stored ACP v1 logs into wire logs and maps them
// through the pipeline (acptap convert --from acp-v1-log).
//
// An input is one file (gzip or plain; standard input is spooled to a
// temporary file first). Its layout is decided by its first ACP line:
//
//   - "wire": an acptap wire log (its first line is the wire header);
//   - "trace": JSONL of {"dir": "send"|"recv"|"c2a"|"a2c", "line": "…"}, one
//     wire line each with its direction (the trace the test clients write);
//   - "frames": JSONL of ACP v1 JSON-RPC messages, one per line, whose
//     direction is inferred from the v1 method table and the requests seen;
//   - "updates": JSONL of bare session/update params ({sessionId, update}),
//     wrapped as agent → client session/update notifications.
//
// Lines that are not JSON, not ACP, or of another layout are skipped and
// counted with their line numbers; they never stop a conversion. The result
// is a wire log in the store named after the input's SHA-256
// (v1-<12 hex>.jsonl), so converting the same file again finds it.
// Everything is streamed: memory does not grow with the input's size.
package logimport
