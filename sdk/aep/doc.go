// Package aep is the Agent Event Protocol (AEP 0.1) model shared by the
// plugins that emit AEP events and the host tools that carry them: the
// envelope and its ordered encoding, capture levels and down-levelling
// (AEP-0001 §8.2), the canonical JSON and digest rule and the redaction
// pipeline (AEP-0003 §9.3–9.4), form-value gating (AEP-0006), deterministic
// ULIDs, the embedded AEP JSON Schemas, and the cross-event stream rules a
// receiver enforces. The validator over those schemas is sdk/aep/aepcheck,
// beside the model, so that a plugin writing events links no JSON Schema
// validator.
//
// The schemas under schemas/ are unchanged copies from the AEP repository
// (Apache-2.0, © The Agent Event Protocol Authors; see schemas/NOTICE).
package aep
