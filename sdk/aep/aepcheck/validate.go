package aepcheck

import (
	"bytes"
	"fmt"
	"io/fs"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/acptap/acptap/sdk/aep"
)

const schemaBase = "aep://schemas/0.1/"

// Validator checks single events against the AEP 0.1 envelope schema and,
// when the type has one, its payload schema (formats asserted).
type Validator struct {
	envelope *jsonschema.Schema
	types    map[string]*jsonschema.Schema
}

var (
	defaultValidator     *Validator
	defaultValidatorErr  error
	defaultValidatorOnce sync.Once
)

// DefaultValidator returns a shared Validator over the embedded schemas.
func DefaultValidator() (*Validator, error) {
	defaultValidatorOnce.Do(func() { defaultValidator, defaultValidatorErr = NewValidator() })
	return defaultValidator, defaultValidatorErr
}

// NewValidator compiles the embedded schemas.
func NewValidator() (*Validator, error) {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	sfs := aep.Schemas()
	add := func(path string) error {
		raw, err := fs.ReadFile(sfs, path)
		if err != nil {
			return err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return c.AddResource(schemaBase+path, doc)
	}
	if err := add("aep-event.schema.json"); err != nil {
		return nil, err
	}
	env, err := c.Compile(schemaBase + "aep-event.schema.json")
	if err != nil {
		return nil, fmt.Errorf("compile the envelope schema: %w", err)
	}
	v := &Validator{envelope: env, types: map[string]*jsonschema.Schema{}}
	files, err := fs.Glob(sfs, "types/*.schema.json")
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		if err := add(f); err != nil {
			return nil, err
		}
		s, err := c.Compile(schemaBase + f)
		if err != nil {
			return nil, fmt.Errorf("compile %s: %w", f, err)
		}
		v.types[strings.TrimSuffix(strings.TrimPrefix(f, "types/"), ".schema.json")] = s
	}
	return v, nil
}

// Validate checks one event (one JSON object) and returns its header.
func (v *Validator) Validate(raw []byte) (*aep.Header, error) {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if _, ok := inst.(map[string]any); !ok {
		return nil, fmt.Errorf("an event is a JSON object")
	}
	if err := v.envelope.Validate(inst); err != nil {
		return nil, fmt.Errorf("envelope: %s", oneLine(err))
	}
	h, err := aep.ParseHeader(raw)
	if err != nil {
		return nil, err
	}
	if s, ok := v.types[h.Type]; ok {
		if data, present := inst.(map[string]any)["data"]; present {
			if err := s.Validate(data); err != nil {
				return nil, fmt.Errorf("%s data: %s", h.Type, oneLine(err))
			}
		}
	}
	return h, nil
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
