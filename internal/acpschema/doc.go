// Package acpschema checks ACP wire messages against the official ACP JSON
// Schemas (v1, protocolVersion 1, stable and unstable, from
// @agentclientprotocol/sdk 2.4.0; the v2 draft 2.0.0-alpha.9 from 2.0.0;
// Apache-2.0, see schema/README.md).
//
// A Checker follows one conversation: the JSON-RPC envelope of each message
// is checked against the sender's top-level definition, params against the
// definition the schema binds to the method (`x-method`, `x-side`), and a
// result against the response definition of the request it answers. The
// schemas are compiled once per version, lazily, on the first NewChecker.
//
// Most messages conform, so a Checker first takes a fast path: a strict
// one-pass decoder that yields exactly encoding/json's values (decode.go),
// and a check that walks the same compiled schemas answering valid,
// invalid or unsure without building errors (fastvalid.go). A message the
// strict tape parser takes (internal/jsonscan.Tape) is checked on its tape
// by validators compiled once per schema (compiled.go: each schema's $ref
// and allOf layers flattened into one check, an object's members looked up
// once); the interpreter of fastvalid.go checks decoded values. Only a
// "valid" is trusted; anything else is validated by jsonschema itself, so
// the verdicts and messages are jsonschema's.
//
//	c, err := acpschema.NewChecker(acpschema.V2)
//	if err := c.Check(acpschema.Agent, line); err != nil { … }
package acpschema
