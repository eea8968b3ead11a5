package aep

import (
	"crypto/sha256"
	"time"
)

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// ULID encodes a ULID: 48 bits of Unix milliseconds and 80 bits of entropy,
// as 26 Crockford base-32 characters.
func ULID(ms uint64, entropy [10]byte) string {
	var id [16]byte
	id[0], id[1], id[2] = byte(ms>>40), byte(ms>>32), byte(ms>>24)
	id[3], id[4], id[5] = byte(ms>>16), byte(ms>>8), byte(ms)
	copy(id[6:], entropy[:])
	// 128 bits → 26 characters of 5 bits; the first carries 3 bits.
	var out [26]byte
	var acc uint16
	bits := 2 // 130 bits of output for 128 of input: two leading zero bits
	j := 0
	for _, c := range id {
		acc = acc<<8 | uint16(c)
		bits += 8
		for bits >= 5 {
			bits -= 5
			out[j] = crockford[(acc>>bits)&31]
			j++
		}
	}
	return string(out[:])
}

// DerivedULID is a deterministic ULID: the time part is t in Unix
// milliseconds, the 80-bit "random" part the first 10 bytes of the SHA-256
// of the parts (each followed by a NUL). Emitters that must reproduce their
// output byte for byte (rebuilds, restarts) derive ids this way from what
// identifies the event: its source frame and its position.
func DerivedULID(t time.Time, parts ...string) string {
	var buf [256]byte // the parts, each NUL-terminated, hashed at once
	in := buf[:0]
	for _, p := range parts {
		in = append(append(in, p...), 0)
	}
	sum := sha256.Sum256(in)
	var e [10]byte
	copy(e[:], sum[:])
	ms := t.UnixMilli()
	if ms < 0 {
		ms = 0
	}
	return ULID(uint64(ms)&(1<<48-1), e)
}
