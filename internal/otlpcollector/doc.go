// Package otlpcollector runs the real OpenTelemetry Collector OTLP
// receiver (go.opentelemetry.io/collector/receiver/otlpreceiver)
// in-process, on loopback, for tests: gRPC and HTTP at once, with a
// consumer that records every log record and span that arrived (flattened
// to plain values) and that can be told to refuse, so that delivery can
// be tested against the receiver a team's collector actually runs.
// Nothing outside tests imports it.
package otlpcollector
