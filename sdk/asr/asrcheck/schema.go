package asrcheck

import (
	"bytes"
	_ "embed"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/acptap/acptap/sdk/asr"
)

// The ASR JSON Schema (draft 2020-12). docs/asr.schema.json is a published
// copy; a test keeps the two identical.
//
//go:embed schema/asr.schema.json
var schemaJSON []byte

// SchemaID is the schema's $id.
const SchemaID = "https://raw.githubusercontent.com/acptap/acptap/main/docs/asr.schema.json"

// Schema returns the ASR JSON Schema (draft 2020-12) for one stream line:
// the header, the record envelope and every record type. The caller owns
// the returned bytes.
func Schema() []byte { return bytes.Clone(schemaJSON) }

// schemaTypes are the record types with a body schema of their own
// ($defs/<type>).
var schemaTypes = []string{
	asr.TypeMessage, asr.TypeToolCall, asr.TypeToolResult, asr.TypeFileChange, asr.TypePermission,
	asr.TypeInputRequest, asr.TypePlan, asr.TypeTerminal, asr.TypeState, asr.TypeCompaction,
	asr.TypeUsageSummary, asr.TypeSessionInfo, asr.TypeConfigChange, asr.TypeSubagent, asr.TypeDeclaration,
}

// compiledSchemas holds the schema compiled once per process: the whole
// line schema, the header, the envelope, and each record type's schema.
type compiledSchemas struct {
	line, header, envelope, audit, vendor, other *jsonschema.Schema
	types                                        map[string]*jsonschema.Schema
}

var (
	schemasOnce sync.Once
	schemas     *compiledSchemas
	schemasErr  error
)

// compiled returns the embedded schema, compiled (formats asserted).
func compiled() (*compiledSchemas, error) {
	schemasOnce.Do(func() { schemas, schemasErr = compileSchemas() })
	return schemas, schemasErr
}

func compileSchemas() (*compiledSchemas, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, fmt.Errorf("asr: schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(SchemaID, doc); err != nil {
		return nil, fmt.Errorf("asr: schema: %w", err)
	}
	compile := func(def string) (*jsonschema.Schema, error) {
		loc := SchemaID
		if def != "" {
			loc += "#/$defs/" + def
		}
		s, err := c.Compile(loc)
		if err != nil {
			return nil, fmt.Errorf("asr: compile schema %s: %w", loc, err)
		}
		return s, nil
	}
	out := &compiledSchemas{types: map[string]*jsonschema.Schema{}}
	for _, x := range []struct {
		def string
		dst **jsonschema.Schema
	}{{"", &out.line}, {"header", &out.header}, {"envelope", &out.envelope}, {"audit", &out.audit}, {"vendor", &out.vendor}, {"other", &out.other}} {
		if *x.dst, err = compile(x.def); err != nil {
			return nil, err
		}
	}
	for _, t := range schemaTypes {
		if out.types[t], err = compile(t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// forType returns the schema a record of type t is checked against, and
// whether t is a known type (an ASR type, an audit-only type, or a vendor
// type). An unknown type is checked against the envelope only.
func (cs *compiledSchemas) forType(t string) (*jsonschema.Schema, bool) {
	switch {
	case t == "header":
		return cs.header, true
	case asr.IsAudit(t):
		return cs.audit, true
	case asr.IsVendor(t):
		return cs.vendor, true
	}
	if s, ok := cs.types[t]; ok {
		return s, true
	}
	for _, o := range asr.OtherTypes {
		if t == o {
			return cs.other, true
		}
	}
	return cs.envelope, false
}
