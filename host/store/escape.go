package store

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
)

// MaxNameLen is the longest escaped name used as is. A longer one becomes a
// hashed name: the first bytes of the escaped ID, '~', and the SHA-256 of the
// ID in hex. '~' never occurs in an unhashed name (it is escaped as %7E), so
// the two forms cannot collide. A hashed name cannot be unescaped; the store
// writes the real ID to the session directory's "id" file, and the stream
// header carries it anyway.
const MaxNameLen = 200

// hashedPrefixLen leaves room for '~' and 64 hex digits within MaxNameLen.
const hashedPrefixLen = MaxNameLen - 1 - 2*sha256.Size

// emptyName stands for the empty ID; no other ID escapes to a lone '%'.
const emptyName = "%"

var (
	// ErrHashedName is returned by UnescapeID for a name made from a long
	// ID's hash; the ID must be read from elsewhere.
	ErrHashedName = errors.New("hashed name: the session ID is not recoverable from it")
	// ErrNotEscaped is returned by UnescapeID for a name EscapeID never makes.
	ErrNotEscaped = errors.New("not an escaped session ID")
)

const upperHex = "0123456789ABCDEF"

// plain reports whether byte c stays itself in an escaped name.
func plain(c byte, first bool) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	case c == '_', c == '-':
		return true
	case c == '.':
		return !first
	}
	return false
}

// EscapeID turns a session (or connection) ID into a safe file name: bytes in
// [A-Za-z0-9._-] stay, except a leading '.'; every other byte, '%' included,
// becomes %XX with upper-case hex. The empty ID becomes "%". Names longer
// than MaxNameLen are hashed (see MaxNameLen). Escaping is byte-wise, so any
// string round-trips, including invalid UTF-8.
func EscapeID(id string) string {
	if id == "" {
		return emptyName
	}
	var b strings.Builder
	b.Grow(len(id))
	for i := 0; i < len(id); i++ {
		c := id[i]
		if plain(c, i == 0) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(upperHex[c>>4])
		b.WriteByte(upperHex[c&0xf])
	}
	name := b.String()
	if len(name) <= MaxNameLen {
		return name
	}
	cut := hashedPrefixLen
	if i := strings.LastIndexByte(name[:cut], '%'); i >= cut-2 {
		cut = i // do not split an escape
	}
	sum := sha256.Sum256([]byte(id))
	return name[:cut] + "~" + hex.EncodeToString(sum[:])
}

// UnescapeID reverses EscapeID. It accepts only the canonical names EscapeID
// produces (so EscapeID(UnescapeID(n)) == n), returns ErrHashedName for a
// hashed name and ErrNotEscaped for anything else.
func UnescapeID(name string) (string, error) {
	if name == emptyName {
		return "", nil
	}
	if strings.IndexByte(name, '~') >= 0 {
		if isHashedName(name) {
			return "", ErrHashedName
		}
		return "", ErrNotEscaped
	}
	if name == "" || len(name) > MaxNameLen {
		return "", ErrNotEscaped
	}
	out := make([]byte, 0, len(name))
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c != '%' {
			if !plain(c, len(out) == 0) {
				return "", ErrNotEscaped
			}
			out = append(out, c)
			continue
		}
		if i+2 >= len(name) {
			return "", ErrNotEscaped
		}
		hi, lo := strings.IndexByte(upperHex, name[i+1]), strings.IndexByte(upperHex, name[i+2])
		if hi < 0 || lo < 0 {
			return "", ErrNotEscaped
		}
		d := byte(hi<<4 | lo)
		if plain(d, len(out) == 0) {
			return "", ErrNotEscaped // canonical names never escape a plain byte
		}
		out = append(out, d)
		i += 2
	}
	return string(out), nil
}

// isHashedName reports whether name has the shape of a hashed name.
func isHashedName(name string) bool {
	i := strings.LastIndexByte(name, '~')
	if i < 0 || len(name)-i-1 != 2*sha256.Size || i > hashedPrefixLen {
		return false
	}
	if _, err := hex.DecodeString(name[i+1:]); err != nil || strings.ToLower(name[i+1:]) != name[i+1:] {
		return false
	}
	return strings.IndexByte(name[:i], '~') < 0
}
