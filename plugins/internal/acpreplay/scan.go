package acpreplay

import (
	"encoding/json"
	"strconv"

	"github.com/acptap/acptap/internal/jsonscan"
)

// The top level of a record line, read in one pass. Both replay passes
// read every record's envelope; encoding/json validates and reflects over
// the whole line for each, which made it most of the replay's time.
// internal/jsonscan walks the line once and hands out each top-level member's
// raw value; only those values are decoded. The records a replay sends are
// decoded with encoding/json, which validates them.

// topFields calls fn with the raw key (still escaped, without quotes) and
// raw value of each member of the JSON object b (internal/jsonscan). It reports
// false when b is not an object it can walk; fn may have been called for
// members before the problem.
func topFields(b []byte, fn func(key, val []byte)) bool {
	return jsonscan.Members(b, func(k, v []byte) bool { fn(k, v); return true })
}

// jstr decodes a raw JSON string value ("" for anything else).
func jstr(v []byte) string {
	s, _ := jsonscan.String(v)
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
