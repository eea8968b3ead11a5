// Package replaytest holds the end-to-end tests and the benchmark of
// `acptap replay`, `acptap replay --serve` and `acptap roundtrip` (ASR-724…733).
// TestMain builds the acptap binary once; every test runs it as a real
// process, with the acpv2 plugin out of process, against a store recorded by
// `acptap demo`, the stream with every record type, and — when node and the
// official ACP SDK are installed (testdata/sdk) — a session the SDK's v2
// agent drove through `acptap record`, opened by the SDK's v2 client.
package replaytest
