// Package storesink is the store side of the pipeline: Sink writes what
// the plugins produce into the store (ASR streams, AEP files, diagnostics
// to the log) and Sessions answers what the store holds of a session. They
// implement pipeline.Sink and pipeline.SessionStore, so the pipeline knows
// only its own interfaces, never host/store (internal/depcheck holds it to
// that).
package storesink
