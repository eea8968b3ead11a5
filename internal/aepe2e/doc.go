// Package aepe2e holds the end-to-end tests of the AEP output: the official
// npm ACP SDK peers (testdata/sdk) talk through a real `acptap record`, and
// the AEP events it writes — to the store's JSONL files and through a real
// `acptap relay` — are checked against the AEP 0.1 schemas and stream rules.
package aepe2e
