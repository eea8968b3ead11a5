package wire

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acptap/acptap/internal/jsonscan"
	"github.com/acptap/acptap/sdk"
)

// extra[c] is how many bytes escaping adds for byte c: 0 for the bytes that
// go into a JSON string unchanged (0x20 and up, except '"' and '\\'), 1 for
// two-character escapes, 5 for \u00XX. Bytes >= 0x80 are copied as is, which
// is correct because callers only pass valid UTF-8.
var extra = func() (t [256]uint8) {
	for c := 0; c < 0x20; c++ {
		t[c] = 5
	}
	for _, c := range []byte{'"', '\\', '\n', '\r', '\t'} {
		t[c] = 1
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// class[c] says how byte c goes into a JSON string: 0 as it is, 1 as a
// two-character escape, 5 as \u00XX (extra's values), 2 for a byte of a
// multi-byte UTF-8 sequence (as it is, once the sequence is checked).
var class = func() (t [256]uint8) {
	t = extra
	for c := 0x80; c < 0x100; c++ {
		t[c] = 2
	}
	return t
}()

// appendString appends s, which must be valid UTF-8 (or a part of such a
// string cut anywhere: writeBigFrame's segments), as a JSON string; bytes of
// multi-byte sequences are copied as they are.
func appendString(dst, s []byte) []byte {
	dst, _ = appendJSONString(dst, s, false)
	return dst
}

// appendStringValid is appendString checking that s is valid UTF-8 as it
// goes; ok false: it is not (dst then holds a partial string, which the
// caller cuts off).
func appendStringValid(dst, s []byte) (_ []byte, ok bool) { return appendJSONString(dst, s, true) }

// appendJSONString is one pass over s. Capture escapes every line the tee forwards, so
// the bytes are stored one by one into room made beforehand (one output byte per input
// byte, plus what the escapes add) rather than appended run by run, and a word of eight
// bytes that all go in as they are (jsonscan.EscapeMask) is stored at once: a JSON-RPC line has a
// quote every few bytes, the text inside it long runs without one.
func appendJSONString(dst, s []byte, check bool) (_ []byte, ok bool) {
	dst = slices.Grow(dst, len(s)+len(s)/4+2) // a JSON-RPC line escapes some 10-15 % of its bytes
	dst = append(dst, '"')
	n := len(dst)
	out := dst[:cap(dst)]
	const ones, highs, lows = 0x0101010101010101, 0x8080808080808080, 0x7f7f7f7f7f7f7f7f
	for i := 0; i < len(s); {
		if i+8 <= len(s) && n+24 <= len(out) {
			// The word is stored whole; the output advances past its bytes that go in
			// as they are, up to the first that does not (the lowest bit of the mask).
			x := binary.LittleEndian.Uint64((*[8]byte)(s[i : i+8])[:])
			binary.LittleEndian.PutUint64((*[8]byte)(out[n : n+8])[:], x)
			m := jsonscan.EscapeMask(x)
			if m == 0 {
				i, n = i+8, n+8
				continue
			}
			// A word whose only bytes to escape are quotes and backslashes (a JSON-RPC
			// line's are mostly its own quotes, nested) is escaped in place: a backslash
			// before each, the rest of the word stored again after it.
			if (x|^((x|highs)-0x20*ones))&highs == 0 {
				q, bs := x^('"'*ones), x^('\\'*ones)
				qb := ^((((q & lows) + lows) | q) & (((bs & lows) + lows) | bs)) & highs
				// The k-th escaped byte at p of the word goes to p+k of the output
				// (p+k < 16: the mask keeps the stores inside o without a check).
				o := (*[24]byte)(out[n : n+24])
				k := 0
				for qb != 0 {
					p := bits.TrailingZeros64(qb) >> 3
					at := (p + k) & 15
					o[at] = '\\'
					binary.LittleEndian.PutUint64(o[at+1:at+9], x>>(8*p))
					k++
					qb &= qb - 1
				}
				i, n = i+8, n+8+k
				continue
			}
			p := bits.TrailingZeros64(m) >> 3
			i, n = i+p, n+p
		}
		c := s[i]
		k := class[c]
		if k == 0 && n < len(out) {
			out[n] = c
			n, i = n+1, i+1
			continue
		}
		// An escape writes at most 6 bytes for this one; the rest of s and the closing
		// quote need one each.
		if len(out)-n < len(s)-i+7 {
			out = slices.Grow(out[:n], len(s)-i+len(s)/4+7)
			out = out[:cap(out)]
		}
		switch k {
		case 0:
			out[n] = c
			n, i = n+1, i+1
			continue
		case 2:
			if !check {
				out[n] = c
				n, i = n+1, i+1
				continue
			}
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				return out[:n], false
			}
			n += copy(out[n:], s[i:i+size])
			i += size
			continue
		case 1:
			e := c
			switch c {
			case '\n':
				e = 'n'
			case '\r':
				e = 'r'
			case '\t':
				e = 't'
			}
			out[n], out[n+1] = '\\', e
			n += 2
		default:
			out[n], out[n+1], out[n+2], out[n+3], out[n+4], out[n+5] = '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf]
			n += 6
		}
		i++
	}
	if n == len(out) {
		out = slices.Grow(out[:n], 1)
		out = out[:cap(out)]
	}
	out[n] = '"'
	return out[:n+1], true
}

// minB64Line is the shortest valid UTF-8 line escapesLonger may send to
// base64: shorter lines stay readable whatever they hold.
const minB64Line = 64 << 10

// escapesLonger reports whether a long line would grow more as a JSON
// string than as base64 (4/3): a line of control characters escapes to
// six times its size, which would make a 256 MiB frame a 1.5 GiB wire-log
// line to write, hold and read back.
func escapesLonger(s []byte) bool {
	if len(s) < minB64Line {
		return false
	}
	n := len(s)
	for _, c := range s {
		n += int(extra[c])
	}
	return n > base64.StdEncoding.EncodedLen(len(s))
}

// appendTime appends t in UTC as RFC 3339 with every nanosecond kept.
func appendTime(dst []byte, t time.Time) []byte {
	return t.UTC().AppendFormat(dst, time.RFC3339Nano)
}

// timeCache keeps the last time appendTime wrote: the lines of one read share its time.
type timeCache struct {
	at time.Time
	b  []byte
}

func (c *timeCache) append(dst []byte, t time.Time) []byte {
	if c == nil {
		return appendTime(dst, t)
	}
	if len(c.b) == 0 || !t.Equal(c.at) {
		c.at, c.b = t, appendTime(c.b[:0], t)
	}
	return append(dst, c.b...)
}

// appendEntry appends e as one wire-log line, LF included.
func appendEntry(dst []byte, e *Entry) ([]byte, error) { return appendEntryT(dst, e, nil) }

func appendEntryT(dst []byte, e *Entry, tc *timeCache) ([]byte, error) {
	if e.Dir != sdk.C2A && e.Dir != sdk.A2C {
		return dst, fmt.Errorf("entry %d: invalid direction %d", e.Seq, e.Dir)
	}
	switch e.Type {
	case TypeFrame, TypeGap, TypeSession:
	default:
		return dst, fmt.Errorf("entry %d: invalid type %q", e.Seq, e.Type)
	}
	dst = append(dst, `{"type":"`...)
	dst = append(dst, e.Type...)
	dst = append(dst, `","seq":`...)
	dst = strconv.AppendUint(dst, e.Seq, 10)
	if !e.At.IsZero() {
		dst = append(dst, `,"at":"`...)
		dst = tc.append(dst, e.At)
		dst = append(dst, '"')
	}
	dst = append(dst, `,"dir":"`...)
	dst = append(dst, e.Dir.String()...)
	dst = append(dst, '"')
	if e.Type == TypeSession {
		dst = append(dst, `,"sessionId":`...)
		dst = appendString(dst, []byte(strings.ToValidUTF8(e.Session.ID, "\uFFFD")))
		dst = append(dst, `,"connections":`...)
		dst = strconv.AppendInt(dst, int64(e.Session.Connections), 10)
		dst = append(dst, `,"priorLines":`...)
		dst = strconv.AppendInt(dst, int64(e.Session.PriorLines), 10)
		if len(e.Session.PluginLines) > 0 {
			dst = append(dst, `,"pluginLines":{`...)
			for i, name := range slices.Sorted(maps.Keys(e.Session.PluginLines)) {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = appendString(dst, []byte(strings.ToValidUTF8(name, "\uFFFD")))
				dst = append(dst, ':')
				dst = strconv.AppendInt(dst, int64(e.Session.PluginLines[name]), 10)
			}
			dst = append(dst, '}')
		}
		if e.Session.AEPLines > 0 {
			dst = append(dst, `,"aepLines":`...)
			dst = strconv.AppendInt(dst, int64(e.Session.AEPLines), 10)
		}
		if e.Session.Concurrent {
			dst = append(dst, `,"concurrent":true`...)
		}
		return append(dst, '}', '\n'), nil
	}
	if e.Type == TypeGap {
		dst = append(dst, `,"frames":`...)
		dst = strconv.AppendUint(dst, e.Gap.Frames, 10)
		dst = append(dst, `,"bytes":`...)
		dst = strconv.AppendUint(dst, e.Gap.Bytes, 10)
		if e.Gap.Reason != "" {
			dst = append(dst, `,"reason":`...)
			dst = appendString(dst, []byte(strings.ToValidUTF8(e.Gap.Reason, "\uFFFD")))
		}
		return append(dst, '}', '\n'), nil
	}
	// A line is checked for UTF-8 as it is escaped (escapesLonger only
	// counts for lines of 64 KiB and more).
	mark := len(dst)
	ok := len(e.Line) < minB64Line || (utf8.Valid(e.Line) && !escapesLonger(e.Line))
	if ok {
		dst = append(dst, `,"line":`...)
		dst, ok = appendStringValid(dst, e.Line)
	}
	if !ok {
		dst = append(dst[:mark], `,"b64":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, e.Line)
		dst = append(dst, '"')
	}
	return appendFrameEnd(dst, e), nil
}

func appendFrameEnd(dst []byte, e *Entry) []byte {
	if e.NoLF {
		dst = append(dst, `,"nolf":true`...)
	}
	return append(dst, '}', '\n')
}

// streamAbove: a frame line longer than this is encoded in segments
// straight into the writer's buffer (writeBigFrame), not into one encoded
// copy of the whole line first.
const streamAbove = 1 << 20

// writeBigFrame writes frame entry e as appendEntry would, but encodes the
// line segment by segment through scratch (JSON escaping is per byte, and
// base64 per three bytes), so a 200 MiB frame costs no 200 MiB encoded
// copy. It returns scratch for reuse.
func writeBigFrame(w io.Writer, scratch []byte, e *Entry) ([]byte, error) {
	head := *e
	head.Line = nil
	buf, err := appendEntry(scratch[:0], &head)
	if err != nil {
		return scratch, err
	}
	// appendEntry wrote `,"line":""}` + LF for the empty line: cut it back
	// to the start of the value.
	cut := bytes.LastIndex(buf, []byte(`,"line":`))
	b64 := !utf8.Valid(e.Line) || escapesLonger(e.Line)
	buf = buf[:cut]
	if b64 {
		buf = append(buf, `,"b64":"`...)
	} else {
		buf = append(buf, `,"line":"`...)
	}
	const seg = 192 << 10 // a multiple of 3
	for off := 0; off < len(e.Line); off += seg {
		part := e.Line[off:min(off+seg, len(e.Line))]
		if b64 {
			buf = base64.StdEncoding.AppendEncode(buf, part)
		} else {
			q := appendString(buf, part) // "…" around the escaped part
			buf = append(q[:len(buf)], q[len(buf)+1:len(q)-1]...)
		}
		if _, err := w.Write(buf); err != nil {
			return buf[:0], err
		}
		buf = buf[:0]
	}
	buf = appendFrameEnd(append(buf, '"'), e)
	_, err = w.Write(buf)
	return buf[:0], err
}
