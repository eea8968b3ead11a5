package clientlib

import "github.com/acptap/acptap/internal/jsonrpc"

// RPCError is a JSON-RPC error returned by the agent (internal/jsonrpc's).
type RPCError = jsonrpc.Error

// ErrConnClosed is returned when the agent's output ends while a request is pending.
var ErrConnClosed = jsonrpc.ErrClosed
