// Package finisher completes the mapping of connections whose recording
// ended before its plugins caught up, so that `acptap record` exits with the
// agent whatever the mapping backlog (issue 12).
//
// A connection is pending from the moment its wire log is created until its
// outputs are complete: <store>/pending/<escaped connection> exists, and
// whoever maps the connection holds an exclusive flock on it (record while
// it runs, then the detached finisher it hands the open, locked file to, so
// the lock never lapses). A marker nobody holds belongs to a connection
// whose mapping died (finisher killed, machine off): the next acptap command
// that opens the store completes it, as does `acptap rebuild --pending`.
//
// Completing a connection maps its whole wire log again, the way rebuild
// does, into a sink that first cuts every file the connection writes back to
// the lines it continued (storesink.Sink.Truncate): what a killed run
// wrote of it is replaced, never duplicated, and the bytes are those the
// foreground would have written (same frames, same plugins). The marker is
// removed only after every output is written; the lock makes sure two
// finishers never map the same connection.
package finisher
