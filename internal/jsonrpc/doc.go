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
// (internal/demo) use it. It is written here, on the standard library,
// because what these peers need is not what the Go JSON-RPC libraries are
// built around (a stream decoder or a framer that ends the connection on
// bytes that are not JSON): one message per line, a line that is not JSON
// answered and read past, batches, and a replayed frame sent byte for byte
// (SendRaw); and so the example agent and client stay standard library
// only, as their docs promise.
package jsonrpc
