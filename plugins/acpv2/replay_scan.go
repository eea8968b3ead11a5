package acpv2

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// A small scanner for the top level of a record line. Both replay passes
// read every record's envelope; encoding/json validates and reflects over
// the whole line for each, which made it most of the replay's time. The
// scanner walks the line once, hands out each top-level member's raw value,
// and only those values are decoded. It does not validate literals; the
// records a replay sends are decoded with encoding/json, which does.

// topFields calls fn with the raw key (still escaped, without quotes) and
// raw value of each member of the JSON object b. It reports false when b
// is not an object it can walk; fn may have been called for members before
// the problem.
func topFields(b []byte, fn func(key, val []byte)) bool {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipWS(b, i+1) == len(b)
	}
	for {
		i = skipWS(b, i)
		if i >= len(b) || b[i] != '"' {
			return false
		}
		ks := i
		if i = skipString(b, i); i < 0 {
			return false
		}
		key := b[ks+1 : i-1]
		i = skipWS(b, i)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipWS(b, i+1)
		vs := i
		if i = skipValue(b, i); i < 0 {
			return false
		}
		fn(key, b[vs:i])
		i = skipWS(b, i)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i++
		case '}':
			return skipWS(b, i+1) == len(b)
		default:
			return false
		}
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] ('"'),
// or -1.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index after the value starting at b[i], or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				if j = skipString(b, j); j < 0 {
					return -1
				}
				j--
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
loop:
	for ; j < len(b); j++ {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			break loop
		}
	}
	if j == i {
		return -1
	}
	return j
}

// jstr decodes a raw JSON string value ("" for anything else).
func jstr(v []byte) string {
	if len(v) < 2 || v[0] != '"' {
		return ""
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1])
	}
	var s string
	_ = json.Unmarshal(v, &s)
	return s
}

// present reports whether a raw value is there and not null.
func present(v []byte) bool { return len(v) > 0 && string(v) != "null" }

// scan reads a record line's envelope with topFields. Raw members
// (Audience, Capture, …) are slices of line: valid only while line is.
func (e *envelope) scan(line []byte) bool {
	*e = envelope{}
	ok := topFields(line, func(k, v []byte) {
		switch string(k) {
		case "type":
			e.Type = jstr(v)
		case "seq":
			e.Seq, _ = strconv.ParseUint(string(v), 10, 64)
		case "id":
			e.ID = jstr(v)
		case "supersedes":
			e.Supersedes = jstr(v)
		case "status":
			e.Status = jstr(v)
		case "ts":
			e.TS = jstr(v)
		case "observedAt":
			e.ObservedAt = jstr(v)
		case "messageId":
			e.MessageID = jstr(v)
		case "callId":
			e.CallID = jstr(v)
		case "planId":
			e.PlanID = jstr(v)
		case "compactionId":
			e.CompactionID = jstr(v)
		case "terminalId":
			e.TerminalID = jstr(v)
		case "cause":
			topFields(v, func(k2, v2 []byte) {
				if string(k2) == "callId" {
					e.CauseCallID = jstr(v2)
				}
			})
		case "role":
			e.Role = jstr(v)
		case "origin":
			e.Origin = jstr(v)
		case "author":
			e.Author = jstr(v)
		case "audience":
			e.Audience = v
		case "from":
			e.From = v
		case "recipients":
			e.Recipients = v
		case "conversation":
			e.Conversation = v
		case "capture":
			e.Capture = v
		case "copiedFrom":
			e.CopiedFrom = v
		case "scope":
			e.Scope = jstr(v)
		case "cumulative":
			e.Cumulative = string(v) == "true"
		case "contextWindow":
			e.ContextWindow = v
		case "state":
			e.State = jstr(v)
		case "lossy":
			_ = json.Unmarshal(v, &e.Lossy)
		case "localThroughId":
			e.LocalThrough = jstr(v)
		}
	})
	return ok && e.Type != ""
}
