package acpschema

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The official schemas, copied unchanged from @agentclientprotocol/sdk 2.0.0
// (v2 alpha.9) and 2.4.0 (v1, stable and unstable, and the newer v2 draft)
// (Apache-2.0; see schema/README.md and schema/LICENSE).
//
//go:embed schema/v2/schema.unstable.json schema/v1/schema.json schema/v1/schema.unstable.json schema/v2-alpha.13/schema.unstable.json
var schemaFS embed.FS

// Version selects the ACP schema a Checker validates against.
type Version int

const (
	// V1 is ACP protocolVersion 1, the stable v1 schema (schema/v1/schema.json).
	V1 Version = 1
	// V2 is the ACP v2 draft 2.0.0-alpha.9, full unstable schema
	// (schema/v2/schema.unstable.json).
	V2 Version = 2
	// V2Alpha13 is the newer ACP v2 draft shipped by SDK 2.3.0 and 2.4.0
	// (schema/v2-alpha.13/schema.unstable.json, named 2.0.0-alpha.13, see
	// schema/README.md): still protocolVersion 2 on the wire.
	V2Alpha13 Version = 3
	// V1Unstable is ACP protocolVersion 1 with its unstable methods and
	// members (schema/v1/schema.unstable.json, SDK 2.4.0): the stable schema
	// plus what agents and clients already speak ahead of stabilisation
	// (session/fork, session/resume, …). Recorders check v1 traffic against
	// it, so that an unstable feature is not taken for a nonconforming frame.
	V1Unstable Version = 4
)

// Protocol is the protocolVersion the schema's frames carry.
func (v Version) Protocol() int {
	switch v {
	case V2Alpha13:
		return 2
	case V1Unstable:
		return 1
	}
	return int(v)
}

// SchemaBytes returns the embedded official schema for v.
func SchemaBytes(v Version) []byte {
	b, err := schemaFS.ReadFile(schemaFile(v))
	if err != nil {
		panic(err)
	}
	return b
}

func schemaFile(v Version) string {
	switch v {
	case V1:
		return "schema/v1/schema.json"
	case V2Alpha13:
		return "schema/v2-alpha.13/schema.unstable.json"
	case V1Unstable:
		return "schema/v1/schema.unstable.json"
	}
	return "schema/v2/schema.unstable.json"
}

// compiledSchema is one schema version: the top-level envelopes per sender and
// the method-specific params/result definitions found through `x-method`.
type compiledSchema struct {
	version  Version
	envelope map[Sender]*jsonschema.Schema
	batch    map[Sender]*jsonschema.Schema // no entries when the version has no batches
	// calls maps "<receiving side>|<method>|<kind>" (kind: request,
	// notification, response) to the definition of its params or result.
	calls map[string]*jsonschema.Schema
	// updates maps a known sessionUpdate kind to a session/update params
	// schema whose update is that kind's branch alone. SessionUpdate is an
	// anyOf whose branches are told apart by a sessionUpdate const (the
	// "other" branch excludes every known kind), so checking the one
	// branch is equivalent to checking them all, and much cheaper.
	updates map[string]*jsonschema.Schema
	// fast holds the fast check's view of every schema above (fastvalid.go).
	fast fastSchemas
	// comp compiles the validator of each schema above when first used (compiled.go).
	comp *lazyComp
}

var (
	compileOnce [5]sync.Once
	compiled    [5]*compiledSchema
	compileErr  [5]error
)

func loadSchema(v Version) (*compiledSchema, error) {
	if v != V1 && v != V2 && v != V2Alpha13 && v != V1Unstable {
		return nil, fmt.Errorf("unknown ACP schema version %d", v)
	}
	compileOnce[v].Do(func() { compiled[v], compileErr[v] = compileSchema(v) })
	return compiled[v], compileErr[v]
}

// schemaURL names version v's schema in the compiler. The embedded schemas
// are fixed, so checking each against the JSON Schema metaschema at every
// process start (a third of the compile; jsonschema checks every resource
// it loads but the metaschemas, which it knows by their json-schema.org
// URLs) is left to a test (TestSchemasMatchMetaschema), and the schemas are
// named under json-schema.org so that jsonschema skips it. The name only
// identifies a resource: nothing is fetched, and no message the checker
// gives names a schema (TestSchemaNameInNoMessage).
func schemaURL(v Version) string {
	return fmt.Sprintf("%sacptap.invalid/acp-v%d.json", skipMetaPrefix, v)
}

// skipMetaPrefix starts the names of the resources jsonschema does not
// check against their metaschema (roots.addRoot).
const skipMetaPrefix = "https://json-schema.org/"

// metaURL is schemaURL when the metaschema is checked (tests).
func metaURL(v Version) string { return fmt.Sprintf("https://acptap.invalid/acp-v%d.json", v) }

func compileSchema(v Version) (*compiledSchema, error) {
	return compileSchemaAt(v, schemaURL(v))
}

// compileSchemaAt compiles version v's schema named url. The schema's
// bytes are parsed once: its definitions' methods, its top-level kinds and
// its update kinds are read from the document jsonschema compiles (before
// nullDefaults changes it), not from parses of their own.
func compileSchemaAt(v Version, url string) (*compiledSchema, error) {
	raw := SchemaBytes(v)
	// decodeJSON gives what jsonschema.UnmarshalJSON does, in a third of
	// the time, its names and short strings interned.
	doc, ok := decodeJSON(raw)
	if !ok {
		var err error
		if doc, err = jsonschema.UnmarshalJSON(bytes.NewReader(raw)); err != nil {
			return nil, fmt.Errorf("parse schema: %w", err)
		}
	}
	meta := readMeta(doc)
	nullDefaults(doc)
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	for _, f := range intFormats() {
		c.RegisterFormat(f)
	}
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("add schema: %w", err)
	}
	cs := &compiledSchema{
		version:  v,
		envelope: map[Sender]*jsonschema.Schema{},
		batch:    map[Sender]*jsonschema.Schema{},
		calls:    map[string]*jsonschema.Schema{},
	}
	top := map[string]string{}
	for i, title := range meta.titles {
		top[title] = fmt.Sprintf("%s#/anyOf/%d", url, i)
	}
	for _, s := range []Sender{Client, Agent} {
		loc, ok := top[s.defName()]
		if !ok {
			return nil, fmt.Errorf("schema has no top-level %q message kind", s.defName())
		}
		sch, err := c.Compile(loc)
		if err != nil {
			return nil, fmt.Errorf("compile %s envelope: %w", s, err)
		}
		cs.envelope[s] = sch
		// Batches (v2 alpha.9 only): entries are checked one by one, so
		// presence of the kind is what matters.
		if _, ok := top[s.defName()+"BatchCall"]; ok {
			sch, err := c.Compile(top[s.defName()+"BatchCall"])
			if err != nil {
				return nil, fmt.Errorf("compile %s batch: %w", s, err)
			}
			cs.batch[s] = sch
		}
	}
	for _, d := range meta.defs {
		var what string
		switch {
		case strings.HasSuffix(d.name, "Request"):
			what = "request"
		case strings.HasSuffix(d.name, "Notification"):
			what = "notification"
		case strings.HasSuffix(d.name, "Response"):
			what = "response"
		default:
			continue
		}
		sch, err := c.Compile(url + "#/$defs/" + d.name)
		if err != nil {
			return nil, fmt.Errorf("compile %s: %w", d.name, err)
		}
		cs.calls[d.side+"|"+d.method+"|"+what] = sch
	}
	if err := compileUpdateKinds(c, meta, url, cs); err != nil {
		return nil, err
	}
	cs.fast = fastSchemas{}
	for _, m := range []map[Sender]*jsonschema.Schema{cs.envelope, cs.batch} {
		for _, s := range m {
			cs.fast.node(s)
		}
	}
	for _, m := range []map[string]*jsonschema.Schema{cs.calls, cs.updates} {
		for _, s := range m {
			cs.fast.node(s)
		}
	}
	cs.fast.finish()
	cs.comp = &lazyComp{fs: cs.fast}
	return cs, nil
}

// schemaMeta is what compileSchemaAt reads of a schema besides compiling it.
type schemaMeta struct {
	// titles are the top level's anyOf titles, in order: the message kinds
	// Agent, Client, (v2 alpha.9) AgentBatchCall, …, ProtocolLevel.
	titles []string
	// defs are the definitions with an x-method, sorted by name.
	defs []methodDef
	// updates is set when the schema's UpdateSessionNotification is
	// session/update's: the const sessionUpdate of each SessionUpdate
	// branch ("" for a branch without one).
	updates    []string
	hasUpdates bool
}

type methodDef struct{ name, method, side string }

// readMeta reads doc's schemaMeta. It reads what a json.Unmarshal of the
// schema into the structs it replaced read (a member of another type than
// expected is left out, as Unmarshal would have failed on it; the schemas
// have none: TestReadMetaSameAsUnmarshal).
func readMeta(doc any) schemaMeta {
	var m schemaMeta
	root, _ := doc.(map[string]any)
	anyOf, _ := root["anyOf"].([]any)
	for _, a := range anyOf {
		o, _ := a.(map[string]any)
		t, _ := o["title"].(string)
		m.titles = append(m.titles, t)
	}
	defs, _ := root["$defs"].(map[string]any)
	for name, d := range defs {
		o, _ := d.(map[string]any)
		method, _ := o["x-method"].(string)
		if method == "" {
			continue
		}
		side, _ := o["x-side"].(string)
		m.defs = append(m.defs, methodDef{name: name, method: method, side: side})
	}
	slices.SortFunc(m.defs, func(a, b methodDef) int { return strings.Compare(a.name, b.name) })
	if n, _ := defs["UpdateSessionNotification"].(map[string]any); n != nil && n["x-method"] == "session/update" {
		m.hasUpdates = true
		su, _ := defs["SessionUpdate"].(map[string]any)
		branches, _ := su["anyOf"].([]any)
		for _, b := range branches {
			o, _ := b.(map[string]any)
			props, _ := o["properties"].(map[string]any)
			kind, _ := props["sessionUpdate"].(map[string]any)
			c, _ := kind["const"].(string)
			m.updates = append(m.updates, c)
		}
	}
	return m
}

// compileUpdateKinds fills cs.updates (v2 only: v1's SessionUpdate has the
// same shape, and a schema without it gets no shortcut).
func compileUpdateKinds(c *jsonschema.Compiler, meta schemaMeta, url string, cs *compiledSchema) error {
	if !meta.hasUpdates {
		return nil
	}
	cs.updates = map[string]*jsonschema.Schema{}
	for i, kind := range meta.updates {
		if kind == "" {
			continue
		}
		res := fmt.Sprintf("%s-update-%d.json", strings.TrimSuffix(url, ".json"), i)
		sch := map[string]any{
			"type": "object",
			"properties": map[string]any{
				"sessionId": map[string]any{"$ref": url + "#/$defs/UpdateSessionNotification/properties/sessionId"},
				"update":    map[string]any{"$ref": fmt.Sprintf("%s#/$defs/SessionUpdate/anyOf/%d", url, i)},
				"_meta":     map[string]any{"$ref": url + "#/$defs/UpdateSessionNotification/properties/_meta"},
			},
			"required": []any{"sessionId", "update"},
		}
		if err := c.AddResource(res, sch); err != nil {
			return fmt.Errorf("add %s branch: %w", kind, err)
		}
		compiled, err := c.Compile(res)
		if err != nil {
			return fmt.Errorf("compile %s branch: %w", kind, err)
		}
		cs.updates[kind] = compiled
	}
	return nil
}

// nullDefaults makes null valid wherever the schema says the SDKs read null
// as the default ("x-deserialize-default-on-null": true — stable v1 since
// SDK 2.4.0 says it of its optional arrays, e.g. session/new's
// mcpServers): the annotation is part of what the schema accepts, but
// JSON Schema validators do not know it. A typed node gains "null" as a
// type; any other node becomes anyOf [itself, null].
func nullDefaults(node any) {
	switch n := node.(type) {
	case map[string]any:
		for _, v := range n {
			nullDefaults(v)
		}
		if n["x-deserialize-default-on-null"] != true {
			return
		}
		switch t := n["type"].(type) {
		case string:
			if t != "null" {
				n["type"] = []any{t, "null"}
			}
		case []any:
			for _, e := range t {
				if e == "null" {
					return
				}
			}
			n["type"] = append(t, "null")
		default:
			inner := map[string]any{}
			for k, v := range n {
				inner[k] = v
				delete(n, k)
			}
			n["anyOf"] = []any{inner, map[string]any{"type": "null"}}
		}
	case []any:
		for _, v := range n {
			nullDefaults(v)
		}
	}
}

// intFormats asserts the numeric formats the ACP schemas use (they are not
// JSON Schema standard formats).
func intFormats() []*jsonschema.Format {
	rng := func(name string, lo, hi *big.Int) *jsonschema.Format {
		return &jsonschema.Format{Name: name, Validate: func(v any) error {
			n, ok := v.(json.Number)
			if !ok {
				return nil
			}
			r, ok := new(big.Rat).SetString(string(n))
			if !ok || !r.IsInt() {
				return fmt.Errorf("%s is not an integer", n)
			}
			i := r.Num()
			if i.Cmp(lo) < 0 || i.Cmp(hi) > 0 {
				return fmt.Errorf("%s is out of %s range", n, name)
			}
			return nil
		}}
	}
	b := func(x int64) *big.Int { return big.NewInt(x) }
	u64 := new(big.Int).SetUint64(math.MaxUint64)
	return []*jsonschema.Format{
		rng("int32", b(math.MinInt32), b(math.MaxInt32)),
		rng("int64", b(math.MinInt64), b(math.MaxInt64)),
		rng("uint16", b(0), b(math.MaxUint16)),
		rng("uint32", b(0), b(math.MaxUint32)),
		rng("uint64", b(0), u64),
		{Name: "double", Validate: func(any) error { return nil }},
	}
}
