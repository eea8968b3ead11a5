// Package asr is the Agent Session Record model shared by acptap plugins and
// tools: the stream header, the record envelope and the record bodies with
// their JSON field names, PathRef conversion, and a streaming reader that
// honours the LF commit mark. It also holds the ASR JSON Schema (Schema),
// the stream validator (Validate) and the context view (ContextView). It
// imports only the standard library and, for Validate, the JSON Schema
// validator santhosh-tekuri/jsonschema, so any plugin or tool can use it
// without pulling in the host.
//
// Marshal encodes any of these types deterministically (struct fields in
// declaration order, map keys sorted, no HTML escaping), which is what makes
// a mapper's output byte-identical across reruns.
package asr
