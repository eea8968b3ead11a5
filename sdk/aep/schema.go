package aep

import (
	"embed"
	"encoding/json"
	"io/fs"
	"sync"
)

//go:embed schemas/aep-event.schema.json schemas/types/*.json schemas/registry/*.json schemas/NOTICE
var schemaFS embed.FS

// Schemas returns the AEP 0.1 schemas: aep-event.schema.json,
// types/<type>.schema.json and registry/*.json.
func Schemas() fs.FS {
	sub, _ := fs.Sub(schemaFS, "schemas")
	return sub
}

// TypeSchema returns the payload schema of a registered type, or false
// when the type has none (x.* types, reserved and unknown types).
func TypeSchema(typ string) ([]byte, bool) {
	b, err := schemaFS.ReadFile("schemas/types/" + typ + ".schema.json")
	return b, err == nil
}

// captureNode is a schema's x-aep-capture annotations: the minimum level of
// a field, and those of its object properties and array items.
type captureNode struct {
	level Level
	props map[string]*captureNode
	items *captureNode
}

type rawSchema struct {
	Capture    string                `json:"x-aep-capture"`
	Properties map[string]*rawSchema `json:"properties"`
	Items      *rawSchema            `json:"items"`
}

var (
	annotMu sync.Mutex
	annots  = map[string]*captureNode{}
)

// annotations returns the capture tree of a type's payload, or nil when
// the type has no schema.
func annotations(typ string) *captureNode {
	annotMu.Lock()
	defer annotMu.Unlock()
	if n, ok := annots[typ]; ok {
		return n
	}
	var n *captureNode
	if raw, ok := TypeSchema(typ); ok {
		var s rawSchema
		if json.Unmarshal(raw, &s) == nil {
			n = buildNode(&s)
		}
	}
	annots[typ] = n
	return n
}

func buildNode(s *rawSchema) *captureNode {
	n := &captureNode{level: Metadata}
	if s.Capture != "" {
		if l, err := ParseLevel(s.Capture); err == nil {
			n.level = l
		}
	}
	if len(s.Properties) > 0 {
		n.props = map[string]*captureNode{}
		for k, p := range s.Properties {
			n.props[k] = buildNode(p)
		}
	}
	if s.Items != nil {
		n.items = buildNode(s.Items)
	}
	return n
}

// HasSchema reports whether the type has a payload schema.
func HasSchema(typ string) bool { return annotations(typ) != nil }

// FieldLevel returns the x-aep-capture minimum of a top-level payload
// field (metadata for fields the schema does not name: vendor extras are
// metadata, AEP-0002 §5.1 rule 4), and false when the type has no schema.
func FieldLevel(typ, field string) (Level, bool) {
	n := annotations(typ)
	if n == nil {
		return 0, false
	}
	if p, ok := n.props[field]; ok {
		return p.level, true
	}
	return Metadata, true
}
