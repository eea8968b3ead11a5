package aep

import (
	"slices"
	"strconv"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/aep"
)

// formField is a form field as AEP describes it, with the ACP values its
// choices stand for (choice ids are 1-based indexes: structural, where the
// ACP enum values are agent-authored text).
type formField struct {
	spec   aep.FieldSpec
	values []string
}

// elicitation maps elicitation/create: read-only attention.requested,
// kind form (URL mode: kind other). Request-scoped elicitations have no
// session and go to the connection lane.
func (c *conn) elicitation(f *sdk.Frame, m msg) []*draft {
	sid := c.sessionOf(m.params)
	mode, _ := str(m.params, "mode")
	if id, ok := str(m.params, "elicitationId"); ok && sid != "" {
		c.elicit[id] = sid
	}
	st := c.session(sid)
	subject, _ := str(m.params, "toolCallId")
	message, _ := str(m.params, "message")
	kind := "other"
	var fields []formField
	if mode == "form" {
		kind = "form"
		fields = c.formFields(child(m.params, "requestedSchema"), c.level("attention.requested"))
	}
	d := c.raise(st, attKey(m.id), kind, f.At, fields)
	d.subject = subject
	d.data = obj{"kind": kind, "prompt": c.attentionPrompt(d.level, kind, subject, "", message)}
	if fields != nil {
		specs := make([]any, len(fields))
		for i, ff := range fields {
			specs[i] = ff.spec
		}
		d.data["fields"] = specs
	}
	if d.level == aep.Full {
		d.data["context"] = m.params
	}
	d.tp = traceparent(m.params)
	return []*draft{d}
}

// formFields turns an ACP elicitation schema into AEP field specs, in
// property-name order. Labels are the property titles through the
// redaction pipeline from redacted up, and the field ids at metadata.
func (c *conn) formFields(schema obj, level aep.Level) []formField {
	props := child(schema, "properties")
	required := map[string]bool{}
	for _, r := range list(schema, "required") {
		if s, ok := r.(string); ok {
			required[s] = true
		}
	}
	out := []formField{}
	for _, name := range sortedKeys(props) {
		p, _ := props[name].(obj)
		ff := formField{spec: aep.FieldSpec{ID: name, Required: required[name], Label: c.label(level, name, p)}}
		typ, _ := str(p, "type")
		enumOf := p
		if typ == "array" {
			ff.spec.Multi = true
			enumOf = child(p, "items")
		}
		if vals, labels := enumChoices(enumOf); vals != nil {
			ff.spec.Type, ff.values = "select", vals
			ff.spec.Choices = []aep.Choice{}
			for i := range vals {
				id := strconv.Itoa(i + 1)
				ff.spec.Choices = append(ff.spec.Choices, aep.Choice{ID: id, Label: c.text(level, id, labels[i])})
			}
		} else {
			switch typ {
			case "number", "integer":
				ff.spec.Type = "number"
			case "boolean":
				ff.spec.Type = "boolean"
			default:
				ff.spec.Type = "string"
			}
			ff.spec.Multi = false
		}
		out = append(out, ff)
	}
	return out
}

// enumChoices reads a single-select's values: enum, or oneOf/anyOf of
// {const, title}.
func enumChoices(p obj) (values, labels []string) {
	for _, e := range list(p, "enum") {
		if s, ok := e.(string); ok {
			values, labels = append(values, s), append(labels, s)
		}
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		for _, e := range list(p, k) {
			o, _ := e.(obj)
			if v, ok := str(o, "const"); ok {
				t, ok := str(o, "title")
				if !ok {
					t = v
				}
				values, labels = append(values, v), append(labels, t)
			}
		}
	}
	return values, labels
}

// label is a field's label: its title (else description) from redacted
// up, its id below.
func (c *conn) label(level aep.Level, id string, p obj) string {
	t, ok := str(p, "title")
	if !ok || t == "" {
		t, _ = str(p, "description")
	}
	return c.text(level, id, t)
}

// text is agent-authored text at a level: the structural placeholder
// below redacted, redacted text, or verbatim.
func (c *conn) text(level aep.Level, placeholder, s string) string {
	switch {
	case level < aep.Redacted || s == "":
		return placeholder
	case level == aep.Redacted:
		return c.s.redactor.Text(s)
	}
	return s
}

// elicitationOutcome maps the client's answer: accept is
// attention.answered with the gated values (decline: the option
// "decline"), then resolved; cancel and errors resolve as dismissed.
func (c *conn) elicitationOutcome(f *sdk.Frame, st *sess, m msg, p *pending) []*draft {
	key := attKey(m.id)
	action, _ := str(m.result, "action")
	if m.kind != kindResult || (action != "accept" && action != "decline") {
		return answered(st, key, c.resolve(st, key, f.At, "dismissed"))
	}
	answer := obj{}
	if action == "decline" {
		answer["option"] = "decline"
	} else if a, ok := st.attention[key]; ok && a.kind == "form" {
		answer["values"] = c.formValues(a.fields, child(m.result, "content"), c.level("attention.answered"))
	} else {
		answer["option"] = "accept"
	}
	return answered(st, key, c.answer(st, key, f, obj{"answer": answer, "via": "oob"}))
}

// formValues maps the accepted content to AEP values: select values become
// choice ids (a value that is no choice is dropped), then the values are
// gated for the level and free text passes the redaction pipeline.
func (c *conn) formValues(fields []formField, content obj, level aep.Level) obj {
	values := obj{}
	specs := make([]aep.FieldSpec, 0, len(fields))
	for _, ff := range fields {
		specs = append(specs, ff.spec)
		v, ok := content[ff.spec.ID]
		if !ok || v == nil {
			continue
		}
		if ff.spec.Type != "select" {
			values[ff.spec.ID] = v
			continue
		}
		choice := func(x any) (string, bool) {
			s, _ := x.(string)
			if i := slices.Index(ff.values, s); i >= 0 {
				return strconv.Itoa(i + 1), true
			}
			return "", false
		}
		if arr, ok := v.([]any); ok {
			ids := []any{}
			for _, e := range arr {
				if id, ok := choice(e); ok {
					ids = append(ids, id)
				}
			}
			values[ff.spec.ID] = ids
		} else if id, ok := choice(v); ok {
			values[ff.spec.ID] = id
		}
	}
	out := aep.GateFormValues(specs, values, level)
	if level == aep.Redacted {
		for k, v := range out {
			out[k] = c.s.redactor.Value(v)
		}
	}
	return out
}
