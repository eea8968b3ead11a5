// Package testpeers holds test helpers for ACP peers: a checker that validates
// every JSON-RPC message of an ACP v1 or v2 (2.0.0-alpha.9) conversation
// against the official JSON Schemas, line taps for io.Pipe conversations, and
// the glue that runs the Node SDK peers in testdata/sdk (NodeSDKDir,
// RunSDKClient). It is imported only by tests.
package testpeers
