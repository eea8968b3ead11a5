// Package jsonl reads LF-delimited files the way acptap's store writes
// them (DESIGN.md, "the store"): the LF is the commit mark, so a final line
// without one is an unfinished write — not an error and not a record, but
// a tail the caller may report, keep or cut — and every line has a bound,
// so an endless input without LF (/dev/zero, a pipe) is an error at a line
// number, not all of memory.
//
// It is the one line reader of the module: sdk/asr's stream Reader, the
// wire log Reader, the log import, the AEP receiver's store, the OTLP
// backfill and the ui's tails are built on it. It lives at the module root
// (not in host or sdk) because both sides import it and other modules must
// not: its API is not a promise to plugin authors, who read streams with
// sdk/asr.
package jsonl
