// Package filekind tells the files acptap reads apart by their first line
// (a wire log, an ASR stream, AEP events, a log of ACP JSON-RPC frames, the
// host's log, gzip), so that a command given a file of the wrong kind says
// so in one line, with the command that reads it, instead of a page of
// errors.
package filekind
