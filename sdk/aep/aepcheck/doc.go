// Package aepcheck validates AEP events against the AEP 0.1 envelope
// schema and each type's payload schema (the schemas embedded in sdk/aep).
// It lives beside sdk/aep, not in it, so that a plugin writing AEP events
// with the model does not pull in the JSON Schema validator and
// golang.org/x/text with it.
package aepcheck
