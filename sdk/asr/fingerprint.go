package asr

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
)

// Fingerprint is a 64-bit digest of a record's content. Two records with
// the same fingerprint say the same thing, whatever their place in a
// stream: a recorder compares a replayed or revised entity with what it
// recorded before (ASR-706, ASR-717) by keeping fingerprints instead of
// whole records.
type Fingerprint uint64

// identityFields are the members that differ between revisions and copies
// of the same content: the record's place (seq, id), its times, its
// revision and copy links, how it was assembled, and where it came from
// (native.ref; native.record, an audit record's content, is kept).
var identityFields = []string{"seq", "id", "ts", "tsSource", "observedAt", "supersedes", "copiedFrom", "assembly"}

// RecordFingerprint digests a record line. The line is put in a canonical
// form first (members sorted, numbers as written, no insignificant
// whitespace), so member order does not matter. omit names further
// top-level members to leave out (a derived messageId, for instance).
func RecordFingerprint(line []byte, omit ...string) (Fingerprint, error) {
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v) // for its message
		return 0, fmt.Errorf("asr: fingerprint: %w", err)
	}
	return fingerprint(line, omit)
}

// FingerprintOf is RecordFingerprint(Marshal(rec), omit...), and Marshal's
// error: the canonical form is encoded from rec directly (encode.go), not
// parsed back from its line.
func FingerprintOf(rec any, omit ...string) (Fingerprint, error) {
	drop := dropped(omit)
	buf := canonPool.Get().(*[]byte)
	if b, ok := encodeAs((*buf)[:0], rec, true, drop); ok && len(b) > 0 && b[0] == '{' {
		return sum(buf, append(b, '\n')), nil
	}
	canonPool.Put(buf)
	line, err := Marshal(rec)
	if err != nil {
		return 0, err
	}
	return fingerprint(line, omit)
}

func dropped(omit []string) []string {
	if len(omit) > 0 {
		return append(slices.Clip(identityFields), omit...)
	}
	return identityFields
}

// fingerprint is RecordFingerprint of line, valid JSON.
func fingerprint(line []byte, omit []string) (Fingerprint, error) {
	if t := bytes.TrimLeft(line, " \t\r\n"); t[0] != '{' {
		return 0, fmt.Errorf("asr: fingerprint: not an object")
	}
	buf := canonPool.Get().(*[]byte)
	return sum(buf, append(canonical((*buf)[:0], line, dropped(omit)), '\n')), nil
}

// sum digests the canonical form b, written into *buf, and recycles buf.
func sum(buf *[]byte, b []byte) Fingerprint {
	d := sha256.Sum256(b)
	recycle(buf, b)
	return Fingerprint(binary.BigEndian.Uint64(d[:8]))
}

// recycle puts buf back in canonPool, holding b (not when b is large: a
// long session's largest record is not kept for the rest of it).
func recycle(buf *[]byte, b []byte) {
	if cap(b) > 1<<20 {
		b = (*buf)[:0]
		if cap(b) > 1<<20 {
			return
		}
	}
	*buf = b
	canonPool.Put(buf)
}

// canonPool recycles the buffers canonical forms are written into.
var canonPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}
