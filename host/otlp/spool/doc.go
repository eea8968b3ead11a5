// Package spool is a durable, bounded, on-disk queue of encoded OTLP
// items (one log record's or one run's spans), kept in the store so that
// what a collector has not acknowledged survives the process: a segment
// file per appended batch, written to a temporary name, synced and
// renamed, so a segment is either whole or absent; a segment is removed
// only once the sender has delivered it (at-least-once). When the spool is
// over its bound, the oldest debug and info items are dropped first, then
// the oldest segment, and every drop is counted by severity rank.
package spool
