// Package otlpe2e holds the end-to-end tests of the OTLP export: the
// official npm ACP SDK peers (testdata/sdk) talk through a real `acptap
// record` that exports to the real OpenTelemetry Collector OTLP receiver
// running in the test (internal/otlpcollector), over gRPC and HTTP; and
// `acptap export --otlp` backfills, resumes after being killed, and
// delivers what a recording left spooled.
package otlpe2e
