package otlp

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
)

// Ids are hashes of what identifies the thing in the recorded session, so
// that the same session always yields the same ids (a retry, a rebuild of
// the wire log and a backfill agree, and a backend can dedupe).

func digest(parts ...string) [32]byte {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

// traceID derives a 16-byte trace id; never all zero.
func traceID(parts ...string) []byte {
	d := digest(append([]string{"acptap.otlp/trace"}, parts...)...)
	id := append([]byte(nil), d[:16]...)
	id[0] |= 1
	return id
}

// spanID derives an 8-byte span id; never all zero.
func spanID(parts ...string) []byte {
	d := digest(append([]string{"acptap.otlp/span"}, parts...)...)
	id := append([]byte(nil), d[:8]...)
	id[0] |= 1
	return id
}

var traceparentRe = regexp.MustCompile(`^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$`)

// parseTraceparent returns the trace and parent span ids of a W3C
// traceparent (version 00), or nil when it is absent or invalid (all-zero
// ids are invalid).
func parseTraceparent(tp string) (trace, parent []byte) {
	m := traceparentRe.FindStringSubmatch(tp)
	if m == nil || m[1] == "00000000000000000000000000000000" || m[2] == "0000000000000000" {
		return nil, nil
	}
	t, _ := hex.DecodeString(m[1])
	p, _ := hex.DecodeString(m[2])
	return t, p
}
