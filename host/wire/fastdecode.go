package wire

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"time"
	"unicode/utf8"

	"github.com/acptap/acptap/sdk"
)

// The fast path of the reader: a frame entry exactly as the Writer writes
// it (appendEntry) —
//
//	{"type":"frame","seq":N,"at":"RFC3339-UTC","dir":"a2c|c2a","line":"…"[,"nolf":true]}
//
// — is decoded in one pass over the line, without encoding/json. Anything
// else (other entry types, b64 lines, other key orders or spacing, escapes
// the Writer does not write, invalid UTF-8, times it does not write) is
// left to decodeEntry, which gives the same entry or error as before: the
// fast path only ever answers for lines whose decoding by encoding/json it
// reproduces exactly (TestFastDecodeMatches, FuzzFastDecode).

var (
	fastFrameHead = []byte(`{"type":"frame","seq":`)
	fastAt        = []byte(`,"at":"`)
	fastDir       = []byte(`"dir":"`)
	fastLine      = []byte(`","line":"`)
	fastNoLF      = []byte(`,"nolf":true}`)
)

// lineSlab is where fastDecodeFrame puts decoded lines: one allocation for
// many short lines (a slab lives as long as any line in it). With reuse,
// every line goes to the same buffer (Reader.ReuseLines).
type lineSlab struct {
	buf   []byte
	reuse bool
	one   []byte
	// The second of the last time parsed (its text up to the fraction and
	// that second as a time), for a line of the same second (parseAt).
	sec     [19]byte
	secT    time.Time
	secOK   bool
	sameSec int // times taken from sec (tests)
}

const slabSize = 64 << 10

// alloc returns n bytes of fresh memory (with reuse: of the one buffer).
func (s *lineSlab) alloc(n int) []byte {
	if s != nil && s.reuse && n <= 1<<20 {
		if cap(s.one) < n {
			s.one = make([]byte, max(n, slabSize/4))
		}
		return s.one[:n:n]
	}
	if s == nil || n > slabSize/4 {
		return make([]byte, n)
	}
	if len(s.buf) < n {
		s.buf = make([]byte, slabSize)
	}
	b := s.buf[:n:n]
	s.buf = s.buf[n:]
	return b
}

// fastDecodeFrame decodes line if it is a frame entry as the Writer writes
// it; ok false: use decodeEntry.
func fastDecodeFrame(line []byte, slab *lineSlab) (e Entry, ok bool) {
	if !bytes.HasPrefix(line, fastFrameHead) {
		return e, false
	}
	p := line[len(fastFrameHead):]
	// seq: digits, no leading zero (as strconv.AppendUint writes them).
	n := 0
	for n < len(p) && p[n] >= '0' && p[n] <= '9' {
		n++
	}
	if n == 0 || n > 19 || (p[0] == '0' && n > 1) {
		return e, false
	}
	// (At most 19 digits: below 2^64, what strconv.ParseUint gives.)
	var seq uint64
	for _, c := range p[:n] {
		seq = seq*10 + uint64(c-'0')
	}
	p = p[n:]
	if bytes.HasPrefix(p, fastAt) {
		p = p[len(fastAt):]
		q := bytes.IndexByte(p, '"')
		if q < 0 {
			return e, false
		}
		at, ok := slab.parseAt(p[:q])
		if !ok {
			return e, false
		}
		e.At = at
		p = p[q+1:]
	}
	if len(p) == 0 || p[0] != ',' {
		return e, false
	}
	p = p[1:]
	if !bytes.HasPrefix(p, fastDir) || len(p) < len(fastDir)+3 {
		return e, false
	}
	p = p[len(fastDir):]
	switch string(p[:3]) {
	case "a2c":
		e.Dir = sdk.A2C
	case "c2a":
		e.Dir = sdk.C2A
	default:
		return e, false
	}
	p = p[3:]
	if !bytes.HasPrefix(p, fastLine) {
		return e, false
	}
	p = p[len(fastLine):]
	// The string's end: the first '"' not escaped. The writer's escapes are
	// \" \\ \n \r \t and \u00XX.
	out := slab.alloc(len(p))
	j := 0
	i := 0
	for {
		// Eight bytes at a time while none needs a look (EscapeMask: '"',
		// '\\', below 0x20, 0x80 and up): each word is stored whole at out[j:]
		// — j <= i, so out (len(p) bytes) has room — and the bytes past the
		// first special one are overwritten by what follows.
		k := i
		for k+8 <= len(p) {
			x := binary.LittleEndian.Uint64((*[8]byte)(p[k : k+8])[:])
			binary.LittleEndian.PutUint64((*[8]byte)(out[j : j+8])[:], x)
			// jsonscan.EscapeMask, by hand (the call is not inlined here):
			// its lowest bit is the first byte that needs a look (the bits
			// above it may be borrows).
			const ones, highs = 0x0101010101010101, 0x8080808080808080
			q, bs := x^('"'*ones), x^('\\'*ones)
			if m := ((x - 0x20*ones) | (q - ones) | (bs - ones)) & highs; m != 0 {
				n := bits.TrailingZeros64(m) >> 3
				// A two-byte escape inside the word is written here, the loop
				// going on after it: most of a line's specials are the frame's
				// own quotes (\", ~35 a line in a rebuild's log), and leaving
				// the loop for each cost more than the bytes between them.
				if n < 7 && byte(x>>(n*8)) == '\\' {
					if d := unescaped[byte(x>>(n*8+8))]; d != 0 {
						out[j+n] = d
						k, j = k+n+2, j+n+1
						continue
					}
				}
				k, j = k+n, j+n
				goto special
			}
			k, j = k+8, j+8
		}
		i = k
		for k < len(p) && p[k] >= 0x20 && p[k] != '"' && p[k] != '\\' && p[k] < 0x80 {
			k++
		}
		j += copy(out[j:], p[i:k])
	special:
		if k == len(p) {
			return e, false
		}
		c := p[k]
		switch {
		case c == '\\': // first: a line's escapes outnumber its one closing quote
			if k+1 >= len(p) {
				return e, false
			}
			if d := unescaped[p[k+1]]; d != 0 {
				out[j] = d
				j++
				i = k + 2
				continue
			}
			// \u00XX below 0x80 only: others (surrogates, non-ASCII) go
			// to encoding/json.
			if p[k+1] != 'u' || k+5 >= len(p) || p[k+2] != '0' || p[k+3] != '0' {
				return e, false
			}
			hi, lo := unhex(p[k+4]), unhex(p[k+5])
			if hi < 0 || lo < 0 || hi > 7 {
				return e, false
			}
			out[j] = byte(hi<<4 | lo)
			j++
			i = k + 6
			continue
		case c == '"':
			p = p[k+1:]
			goto end
		case c < 0x20:
			return e, false // invalid JSON
		default:
			r, size := utf8.DecodeRune(p[k:])
			if r == utf8.RuneError && size == 1 {
				return e, false // encoding/json would put U+FFFD here
			}
			j += copy(out[j:], p[k:k+size])
			i = k + size
		}
	}
end:
	switch {
	case len(p) == 1 && p[0] == '}':
	case bytes.Equal(p, fastNoLF):
		e.NoLF = true
	default:
		return e, false
	}
	e.Type, e.Seq, e.Line = TypeFrame, seq, out[:j:j]
	return e, true
}

// unescaped is the byte each two-byte escape stands for (\" \\ \/ \b \f
// \n \r \t), by the byte after the backslash; 0: not one of those.
var unescaped = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// parseUTC parses the times appendTime writes (RFC 3339, UTC, "Z", 0–9
// fraction digits, no trailing zeros) into what time.Parse(RFC3339Nano)
// returns; ok false for anything else.
func parseUTC(b []byte) (time.Time, bool) {
	// 2006-01-02T15:04:05[.fff…]Z
	if len(b) < 20 || b[len(b)-1] != 'Z' || b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' {
		return time.Time{}, false
	}
	num := func(s []byte) int {
		v := 0
		for _, c := range s {
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	year, month, day := num(b[0:4]), num(b[5:7]), num(b[8:10])
	hour, minute, sec := num(b[11:13]), num(b[14:16]), num(b[17:19])
	if year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || sec < 0 || sec > 59 {
		return time.Time{}, false
	}
	if day > daysIn(time.Month(month), year) {
		return time.Time{}, false
	}
	nsec, ok := parseFrac(b[19 : len(b)-1])
	if !ok {
		return time.Time{}, false
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC), true
}

// parseFrac parses a time's fraction as appendTime writes it (empty, or
// '.' and 1–9 digits without trailing zeros) into nanoseconds.
func parseFrac(frac []byte) (int, bool) {
	if len(frac) == 0 {
		return 0, true
	}
	if frac[0] != '.' || len(frac) < 2 || len(frac) > 10 || frac[len(frac)-1] == '0' {
		return 0, false
	}
	nsec := 0
	for _, c := range frac[1:] {
		if c < '0' || c > '9' {
			return 0, false
		}
		nsec = nsec*10 + int(c-'0')
	}
	for k := len(frac) - 1; k < 9; k++ {
		nsec *= 10
	}
	return nsec, true
}

// parseAt is parseUTC, the same time, for a reader's lines: a line of the
// second before's (most are: a log holds many frames a second) has only
// its fraction parsed, added to that second, without time.Date's calendar
// arithmetic (~10 % of the wire log's decode).
func (s *lineSlab) parseAt(b []byte) (time.Time, bool) {
	if s == nil || len(b) < 20 {
		return parseUTC(b)
	}
	if s.secOK && string(b[:19]) == string(s.sec[:]) && b[len(b)-1] == 'Z' {
		nsec, ok := parseFrac(b[19 : len(b)-1])
		if !ok {
			return time.Time{}, false
		}
		s.sameSec++
		return s.secT.Add(time.Duration(nsec)), true
	}
	t, ok := parseUTC(b)
	if ok {
		copy(s.sec[:], b[:19])
		s.secT, s.secOK = t.Add(-time.Duration(t.Nanosecond())), true
	}
	return t, ok
}

func daysIn(m time.Month, year int) int {
	if m == time.February {
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	}
	return 31 - int((m-1)%7%2)
}
