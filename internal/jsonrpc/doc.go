// Package jsonrpc is the one JSON-RPC 2.0 connection of the module:
// newline-delimited messages over an io.Reader/io.Writer pair, as ACP
// speaks them on stdio. A Conn sends requests with its own ids (from 0) and
// matches the peer's responses to them by id, sends notifications and
// responses, and hands the peer's requests and notifications to a Handler,
// on the reading goroutine or on one worker (Dispatch); a handler may leave
// a request to a goroutine of its own that answers later (ErrReplyLater). A JSON array is a batch (ACP v2 alpha.9).
// Input that is not JSON-RPC is answered with the spec's error (-32700,
// -32600, id null) or dropped (Options.IgnoreMalformed); a response to an
// id nobody waits for is dropped; either is reported to Options.OnDrop.
// The replay server (host/replay) and the example agent and client
// (internal/demo) use it; standard library only, so the examples stay
// readable without a dependency. No Go library fits: the well-kept ones
// (sourcegraph/jsonrpc2, x/exp/jsonrpc2) have no batches and end the
// connection on the first line that is not JSON.
package jsonrpc
