package term

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"unicode/utf8"
)

// termSafe is the output boundary of commands that print a stream's text
// to a terminal (`acptap show`, through term.Show and term.Wire): the agent's and the user's words may hold
// ESC sequences (cursor moves, OSC 52 clipboard writes, title changes), CR
// (overwriting what was printed) or bidi overrides. termSafe renders every
// such character visibly instead: C0 controls but LF and TAB as ^X (ESC is
// ^[, CR ^M), DEL as ^?, C1 controls and the bidi embedding, override and
// isolate characters as <U+XXXX>, bytes that are not UTF-8 as <xNN>.
//
// The only escape sequences that reach the terminal are the painter's own
// SGR colour codes, which it writes as token + code + "m": token is an ESC
// and 16 random hex digits that text cannot guess, turned into ESC "[" here.
// Input may be split anywhere across Write calls.
type termSafe struct {
	w       io.Writer
	token   []byte // ESC + 16 hex digits
	pending []byte // an incomplete rune or token at the end of the last Write
	out     []byte
}

// newTermSafe returns the writer and the token its painter prefixes to an
// SGR code (empty when colour is off, so no escape gets through at all).
func newTermSafe(w io.Writer, colour bool) (*termSafe, string) {
	t := &termSafe{w: w}
	if colour {
		var b [8]byte
		rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
		t.token = append([]byte{0x1b}, hex.EncodeToString(b[:])...)
	}
	return t, string(t.token)
}

// Write implements io.Writer; it reports len(p) on success.
func (t *termSafe) Write(p []byte) (int, error) {
	buf := p
	if len(t.pending) > 0 {
		buf = append(t.pending, p...)
		t.pending = nil
	}
	t.out = t.out[:0]
	rest := t.render(buf, false)
	if len(rest) > 0 {
		t.pending = append([]byte(nil), rest...)
	}
	if _, err := t.w.Write(t.out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush renders what an earlier Write left incomplete.
func (t *termSafe) Flush() error {
	if len(t.pending) == 0 {
		return nil
	}
	t.out = t.out[:0]
	t.render(t.pending, true)
	t.pending = nil
	_, err := t.w.Write(t.out)
	return err
}

// render appends the safe form of b to t.out and returns the bytes at its
// end that may be the start of a rune or token (unless final).
func (t *termSafe) render(b []byte, final bool) []byte {
	for len(b) > 0 {
		c := b[0]
		switch {
		case c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f):
			i := 1
			for i < len(b) && (b[i] == '\n' || b[i] == '\t' || (b[i] >= 0x20 && b[i] < 0x7f)) {
				i++
			}
			t.out = append(t.out, b[:i]...)
			b = b[i:]
			continue
		case c == 0x1b && len(t.token) > 0:
			if n, ok := t.sgr(b); ok {
				t.out = append(append(t.out, 0x1b, '['), b[len(t.token):n]...)
				b = b[n:]
				continue
			} else if n < 0 && !final {
				return b
			}
			t.out = append(t.out, '^', '[')
		case c < 0x20:
			t.out = append(t.out, '^', c+'@')
		case c == 0x7f:
			t.out = append(t.out, '^', '?')
		default:
			r, size := utf8.DecodeRune(b)
			if r == utf8.RuneError && size <= 1 {
				if !final && !utf8.FullRune(b) {
					return b
				}
				t.out = fmt.Appendf(t.out, "<x%02X>", c)
				b = b[1:]
				continue
			}
			if unsafeRune(r) {
				t.out = fmt.Appendf(t.out, "<U+%04X>", r)
			} else {
				t.out = append(t.out, b[:size]...)
			}
			b = b[size:]
			continue
		}
		b = b[1:]
	}
	return nil
}

// sgr matches token [0-9;]+ "m" at the start of b: it returns the length
// and true, or -1 when b ends before the match could be decided.
func (t *termSafe) sgr(b []byte) (int, bool) {
	k := min(len(b), len(t.token))
	if !bytes.Equal(b[:k], t.token[:k]) {
		return 0, false
	}
	if k < len(t.token) {
		return -1, false
	}
	for i := len(t.token); i < len(b); i++ {
		switch c := b[i]; {
		case c == 'm' && i > len(t.token):
			return i + 1, true
		case (c >= '0' && c <= '9') || c == ';':
		default:
			return 0, false
		}
	}
	return -1, false
}

// unsafeRune reports the non-ASCII runes a terminal acts on or that reorder
// text: C1 controls (U+0080–U+009F, e.g. CSI U+009B) and the bidi controls.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return false
}
