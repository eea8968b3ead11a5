// Package relay is an AEP receiver for local use (acptap relay): POST
// /events takes one event or an NDJSON batch (AEP-0003 §3.2), validates
// every envelope against the AEP 0.1 schemas and the stream rules, answers
// with the status codes AEP-0003 gives (202, 400, 413, 415, 426), dedupes
// on (source, id), keeps every session in (epoch, seq) order, and appends
// what it accepts to a JSONL file per agent and session. GET /healthz and
// discovery (GET /events, /.well-known/aep) complete it.
package relay
