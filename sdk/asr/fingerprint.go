package asr

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
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
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return 0, fmt.Errorf("asr: fingerprint: %w", err)
	}
	if m == nil {
		return 0, fmt.Errorf("asr: fingerprint: not an object")
	}
	for _, k := range identityFields {
		delete(m, k)
	}
	for _, k := range omit {
		delete(m, k)
	}
	if n, ok := m["native"].(map[string]any); ok {
		delete(n, "ref")
		if len(n) == 0 {
			delete(m, "native")
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return 0, fmt.Errorf("asr: fingerprint: %w", err)
	}
	sum := sha256.Sum256(b.Bytes())
	return Fingerprint(binary.BigEndian.Uint64(sum[:8])), nil
}
