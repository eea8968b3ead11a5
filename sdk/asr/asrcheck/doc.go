// Package asrcheck checks ASR streams: the ASR JSON Schema (draft 2020-12,
// embedded; Schema, published as docs/asr.schema.json) and the stream
// validator (Validate), which checks every line against the schema and
// the stream invariants of docs/asr.md (seq and id order, supersedes,
// entity keys, PathRefs inside declared roots, declared losses). It lives
// beside sdk/asr, not in it, so that a plugin importing the model does not
// pull in the JSON Schema validator and golang.org/x/text with it.
package asrcheck
