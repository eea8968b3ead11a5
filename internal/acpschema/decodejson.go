package acpschema

// DecodeJSON is the checker's one-pass decoder for other users of the same
// values (the aep plugin's frames): exactly what encoding/json decodes into
// an any with UseNumber (map[string]any, []any, string, json.Number, bool,
// nil) for one JSON value with only whitespace around it; ok false for
// anything else, which the caller decodes with encoding/json itself.
func DecodeJSON(b []byte) (v any, ok bool) { return decodeJSON(b) }
