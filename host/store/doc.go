// Package store owns acptap's files under one root: ASR streams
// (sessions/<id>/stream.asr.jsonl), wire logs (wire/<connection>.jsonl), AEP
// event files (aep/acp/<id>.jsonl) and the host log, with directories 0700
// and files 0600. It maps session IDs to file names reversibly and repairs a
// torn tail (an uncommitted last line) when it reopens a JSONL file.
package store
