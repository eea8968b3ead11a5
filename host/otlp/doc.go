// Package otlp exports recorded sessions as OpenTelemetry: AEP events as
// OTLP LogRecords exactly as AEP-0005 projects them, and the session's
// turns and tool calls as GenAI agent spans (invoke_agent, execute_tool).
// Everything it sends goes through a durable on-disk spool (package
// spool) and is delivered over OTLP/gRPC or OTLP/HTTP protobuf by a
// background sender that retries with backoff, so a collector that is down
// or slow never touches the tee. Trace and span ids derive from the
// recorded session (its AEP event ids, which derive from the wire log), so
// a retry, a rebuild or a backfill re-sends the same ids.
package otlp
