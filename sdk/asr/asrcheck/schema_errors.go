package asrcheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// schemaMessages turns a schema validation error into short messages, one
// per failed constraint, each naming the field as a path (content[0].text).
func schemaMessages(err error) []string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []string{err.Error()}
	}
	var out []string
	seen := map[string]bool{}
	for _, m := range issues(ve) {
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		out = append(out, oneLine(ve.Error()))
	}
	sort.Strings(out) // the library's order follows map iteration
	return out
}

// issues collects the messages of the failed leaves under e. An anyOf over
// alternatives for one value (an enumeration or a "_"-prefixed vendor
// value) becomes one message listing what is allowed.
func issues(e *jsonschema.ValidationError) []string {
	if _, ok := e.ErrorKind.(*kind.AnyOf); ok {
		if m, ok := anyOfMessage(e); ok {
			return []string{m}
		}
	}
	if len(e.Causes) == 0 {
		if echoOfEnvelope(e) {
			return nil
		}
		return []string{leafMessage(e)}
	}
	var out []string
	for _, c := range e.Causes {
		out = append(out, issues(c)...)
	}
	return out
}

// envelopeFields are the properties $defs/envelope defines.
var envelopeFields = map[string]bool{"type": true, "seq": true, "id": true, "ts": true, "tsSource": true,
	"observedAt": true, "status": true, "supersedes": true, "copiedFrom": true, "native": true,
	"capture": true, "assembly": true, "_meta": true}

// echoOfEnvelope reports an error that only echoes another: when the
// envelope fails, draft 2020-12 drops its annotations, so
// unevaluatedProperties also rejects every envelope field. The envelope's
// own error says what is wrong.
func echoOfEnvelope(e *jsonschema.ValidationError) bool {
	if _, ok := e.ErrorKind.(*kind.FalseSchema); !ok || len(e.InstanceLocation) != 1 {
		return false
	}
	return strings.HasSuffix(e.SchemaURL, "/unevaluatedProperties") && envelopeFields[e.InstanceLocation[0]]
}

// leaves returns the failed leaves under e.
func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// anyOfMessage summarises an anyOf whose alternatives all failed on the
// same value: "x" is not one of "a", "b" (or a "_"-prefixed value), or
// "needs one of "a", "b"" when each alternative requires a field.
func anyOfMessage(e *jsonschema.ValidationError) (string, bool) {
	var (
		want     []string
		required []string
		vendor   bool
		got      any
		loc      = pathOf(e.InstanceLocation)
	)
	for _, l := range leaves(e) {
		if pathOf(l.InstanceLocation) != loc {
			return "", false
		}
		switch k := l.ErrorKind.(type) {
		case *kind.Enum:
			got = k.Got
			for _, w := range k.Want {
				want = append(want, display(w))
			}
		case *kind.Const:
			got = k.Got
			want = append(want, display(k.Want))
		case *kind.Pattern:
			if k.Want != "^_." {
				return "", false
			}
			vendor = true
		case *kind.Type:
			vendor = true // the vendor alternative wants a string
		case *kind.Required:
			required = append(required, k.Missing...)
		default:
			return "", false
		}
	}
	switch {
	case len(required) > 0 && len(want) == 0 && !vendor:
		return at(loc, "needs one of "+quoteAll(required)), true
	case len(required) == 0 && len(want) == 1:
		m := display(got) + " is not " + want[0]
		if vendor {
			m += ` or a "_"-prefixed vendor value`
		}
		return at(loc, m), true
	case len(required) == 0 && len(want) > 1:
		m := display(got) + " is not one of " + strings.Join(want, ", ")
		if vendor {
			m += `, or a "_"-prefixed vendor value`
		}
		return at(loc, m), true
	}
	return "", false
}

// leafMessage describes one failed constraint.
func leafMessage(e *jsonschema.ValidationError) string {
	loc := pathOf(e.InstanceLocation)
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		if len(k.Missing) == 1 {
			return at(loc, "missing required field "+strconv.Quote(k.Missing[0]))
		}
		return at(loc, "missing required fields "+quoteAll(k.Missing))
	case *kind.FalseSchema:
		parent := pathOf(e.InstanceLocation[:max(len(e.InstanceLocation)-1, 0)])
		name := ""
		if n := len(e.InstanceLocation); n > 0 {
			name = e.InstanceLocation[n-1]
		}
		return at(parent, fmt.Sprintf("field %q is not allowed here", name))
	case *kind.AdditionalProperties:
		if len(k.Properties) == 1 {
			return at(loc, fmt.Sprintf("field %q is not allowed here", k.Properties[0]))
		}
		return at(loc, "fields "+quoteAll(k.Properties)+" are not allowed here")
	case *kind.Type:
		return at(loc, fmt.Sprintf("is %s, want %s", article(k.Got), strings.Join(k.Want, " or ")))
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = display(w)
		}
		if len(want) == 1 {
			return at(loc, display(k.Got)+" is not "+want[0])
		}
		return at(loc, display(k.Got)+" is not one of "+strings.Join(want, ", "))
	case *kind.Const:
		return at(loc, fmt.Sprintf("%s is not %s", display(k.Got), display(k.Want)))
	case *kind.Pattern:
		switch k.Want {
		case "^r[1-9][0-9]*$":
			return at(loc, fmt.Sprintf("%q is not a record id (r<seq>)", k.Got))
		case "^_.":
			return at(loc, fmt.Sprintf("%q is not a \"_\"-prefixed vendor value", k.Got))
		case "^[A-Za-z0-9+/]*={0,2}$":
			return at(loc, "is not base64 (standard alphabet, padded)")
		}
		return at(loc, fmt.Sprintf("%q does not match %s", k.Got, k.Want))
	case *kind.Format:
		return at(loc, fmt.Sprintf("%s is not a valid %s", display(k.Got), k.Want))
	case *kind.MinLength:
		if k.Want == 1 {
			return at(loc, "must not be empty")
		}
	case *kind.Minimum:
		return at(loc, fmt.Sprintf("%s is less than %s", k.Got.RatString(), k.Want.RatString()))
	case *kind.MinItems:
		return at(loc, fmt.Sprintf("needs at least %d items", k.Want))
	case *kind.UniqueItems:
		return at(loc, fmt.Sprintf("items %d and %d are equal", k.Duplicates[0], k.Duplicates[1]))
	case *kind.DependentRequired:
		return at(loc, fmt.Sprintf("%q needs %s", k.Prop, quoteAll(k.Missing)))
	}
	// Anything else: the library's wording, without its location prefix.
	m := oneLine(e.Error())
	if strings.HasPrefix(m, "at '") {
		if i := strings.Index(m, "': "); i >= 0 {
			m = m[i+3:]
		}
	}
	return at(loc, m)
}

// pathOf renders an instance location as content[0].text.
func pathOf(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		if _, err := strconv.Atoi(t); err == nil {
			b.WriteString("[" + t + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(t)
	}
	return b.String()
}

func at(loc, msg string) string {
	if loc == "" {
		return msg
	}
	return loc + ": " + msg
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

// display renders a JSON value compactly (strings quoted).
func display(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case json.Number:
		return v.String()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 60 {
		return string(b[:57]) + "…"
	}
	return string(b)
}

func article(t string) string {
	switch t {
	case "object", "array", "integer":
		return "an " + t
	case "null":
		return "null"
	}
	return "a " + t
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
