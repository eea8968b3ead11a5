package aep

import "encoding/json"

type jsonNumber = json.Number

// FieldSpec is one field of a form request (AEP-0002 §5.2 field_spec).
type FieldSpec struct {
	ID       string   `json:"id"`
	Type     string   `json:"type"` // string, number, boolean, select
	Label    string   `json:"label"`
	Required bool     `json:"required,omitempty"`
	Multi    bool     `json:"multi,omitempty"`
	Other    bool     `json:"other,omitempty"`
	Choices  []Choice `json:"choices,omitempty"`
}

// Choice is one choice of a select field.
type Choice struct {
	ID    string `json:"id"`
	Label string `json:"label"`
}

// GateFormValues gates the values of a form answer for a ceiling
// (AEP-0006; conformance/fixtures/capture-gating): keys without a field
// spec are dropped; at redacted and above every other value is kept (the
// caller passes free text through the redaction pipeline); below redacted
// only structural values survive: numbers, booleans, and select values that
// are choice ids (an "other" free-text answer is dropped). The ceiling
// none gates like metadata: dropping data wholesale is the envelope's job.
func GateFormValues(fields []FieldSpec, values map[string]any, ceiling Level) map[string]any {
	specs := map[string]FieldSpec{}
	for _, f := range fields {
		specs[f.ID] = f
	}
	out := map[string]any{}
	for k, v := range values {
		f, ok := specs[k]
		if !ok {
			continue
		}
		if ceiling >= Redacted || structuralValue(f, v) {
			out[k] = v
		}
	}
	return out
}

func structuralValue(f FieldSpec, v any) bool {
	switch f.Type {
	case "number", "boolean":
		return isStructural(v)
	case "select":
		isChoice := func(x any) bool {
			s, ok := x.(string)
			if !ok {
				return false
			}
			for _, c := range f.Choices {
				if c.ID == s {
					return true
				}
			}
			return false
		}
		if arr, ok := v.([]any); ok {
			for _, e := range arr {
				if !isChoice(e) {
					return false
				}
			}
			return true
		}
		return isChoice(v)
	}
	return false
}
