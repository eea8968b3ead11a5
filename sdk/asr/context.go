package asr

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Entity is one entity of a context view: its identity and its latest
// revision.
type Entity struct {
	// Type is the record type: message, tool_call, tool_result,
	// file_change, plan, compaction or terminal.
	Type string
	// Key is the value of the type's key field (EntityKeyField): messageId,
	// callId, planId, compactionId or terminalId. A file_change has no key:
	// Key is the id of the entity's first record.
	Key string
	// First is the id of the entity's first record; the view is in the
	// order of First.
	First string
	// Revisions is the number of records of the entity.
	Revisions int
	// Latest is the entity's latest record (Latest.Line is the line).
	Latest Generic
}

// Decode unmarshals the latest revision into v (e.g. a *Message).
func (e Entity) Decode(v any) error { return json.Unmarshal(e.Latest.Line, v) }

// contextType reports whether records of typ are context entities.
func contextType(typ string) bool {
	switch typ {
	case TypeMessage, TypeToolCall, TypeToolResult, TypeFileChange, TypePlan, TypeCompaction, TypeTerminal:
		return true
	}
	return false
}

// ContextView reads a stream and returns its context view at the primary
// head (DESIGN.md, "Path, head, context view"): the latest revision of
// every context entity (message, tool_call, tool_result, file_change, plan,
// compaction, terminal), in the order of each entity's first record. Audit-only
// records and notices (messages with origin "notice") are left out, as are
// records of every other type. ACP sessions are linear, so the path is the
// stream's records in seq order and the head is its last record.
//
// A revision is a later record of the same identity (type + key); a
// file_change revises the record its supersedes names. An uncommitted tail
// is ignored. The stream must start with a header; a line that is not a
// record, or a context record without its key, is an error. Only the
// latest line of each context entity is held.
func ContextView(r io.Reader) ([]Entity, error) {
	rd := NewReader(r)
	first, err := rd.Next()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("asr: context view: empty stream: %w", ErrNotHeader)
	}
	if err != nil {
		return nil, err
	}
	if _, err := ReadHeader(first); err != nil {
		return nil, fmt.Errorf("asr: context view: line 1: %w", err)
	}
	var (
		order []*Entity
		byKey = map[string]*Entity{} // keyed entities by type + "\x00" + key
		byID  = map[string]*Entity{} // file_change entities by the ids of their records
	)
	for {
		line, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		g, err := ReadRecord(line)
		if err != nil {
			return nil, fmt.Errorf("asr: context view: line %d: %w", rd.Line(), err)
		}
		if !contextType(g.Type) {
			continue
		}
		var e *Entity
		if g.Type == TypeFileChange {
			e = byID[g.Supersedes]
			if e == nil {
				e = &Entity{Type: g.Type, Key: g.ID, First: g.ID}
				order = append(order, e)
			}
			byID[g.ID] = e
		} else {
			key, err := entityKey(g.Type, line)
			if err != nil {
				return nil, fmt.Errorf("asr: context view: line %d: %w", rd.Line(), err)
			}
			id := g.Type + "\x00" + key
			e = byKey[id]
			if e == nil {
				e = &Entity{Type: g.Type, Key: key, First: g.ID}
				byKey[id] = e
				order = append(order, e)
			}
		}
		e.Revisions++
		e.Latest = g
	}
	out := make([]Entity, 0, len(order))
	for _, e := range order {
		if e.Type == TypeMessage && isNotice(e.Latest.Line) {
			continue
		}
		out = append(out, *e)
	}
	return out, nil
}

// entityKey reads the key field of a record of a keyed type.
func entityKey(typ string, line []byte) (string, error) {
	field := EntityKeyField(typ)
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return "", err
	}
	// Any string, even empty: keys are the source's, verbatim, and ACP
	// does not forbid an empty one (the schema's "key").
	var key string
	if err := json.Unmarshal(m[field], &key); err != nil {
		return "", fmt.Errorf("%s record without a string %s", typ, field)
	}
	return key, nil
}

// isNotice reports whether a message line has origin "notice".
func isNotice(line []byte) bool {
	var m struct {
		Origin string `json:"origin"`
	}
	return json.Unmarshal(line, &m) == nil && m.Origin == "notice"
}
