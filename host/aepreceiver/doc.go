// Package aepreceiver is the AEP relay behind `acptap relay` (AEP-0003). Ingest:
// POST /events takes one event or an NDJSON batch (§3.2), or a WebSocket
// emitter sends them; every envelope is validated against the AEP 0.1
// schemas and the stream rules, deduped on (source, id), kept in (epoch,
// seq) order per session, and appended to a JSONL file per agent and
// session; an event is marked seen only once its line is written. Fan-out:
// GET /stream (SSE, §3.3) and /socket (WebSocket with the hello exchange,
// §3.5) deliver to consumers with attr-match filters (§6), a capture
// ceiling that down-levels (§6.4), and resume positions replayed from the
// stored log within a bounded per-session buffer (§5, §7). Discovery (GET
// /events, /.well-known/aep) advertises exactly that; GET /healthz is
// open. A bearer token guards everything else (§8.1), Host and Origin are
// checked against DNS rebinding, request bodies are bounded in number and
// time, and idle session files are closed.
package aepreceiver
