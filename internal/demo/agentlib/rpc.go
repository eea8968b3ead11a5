package agentlib

import "github.com/acptap/acptap/internal/jsonrpc"

// JSON-RPC error codes used by the agent: JSON-RPC's own and ACP's.
const (
	codeInvalidRequest   = jsonrpc.CodeInvalidRequest
	codeMethodNotFound   = jsonrpc.CodeMethodNotFound
	codeInvalidParams    = jsonrpc.CodeInvalidParams
	codeInternalError    = jsonrpc.CodeInternalError
	codeNotFound         = -32002
	codeRequestCancelled = -32800
)

// rpcError is a JSON-RPC error object (internal/jsonrpc's).
type rpcError = jsonrpc.Error

// errConnClosed is returned by a call when the client's stream ended first.
var errConnClosed = jsonrpc.ErrClosed
