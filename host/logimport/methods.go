package logimport

import "github.com/acptap/acptap/sdk"

// methodDir is the direction of a request or notification of each ACP v1
// method: the side that serves it receives it. Agent methods travel client →
// agent, client methods agent → client (the "x-side" of each method in the
// v1 schema, stable and unstable; TestMethodTableMatchesV1Schema keeps the
// two in step). Methods served by both sides ($/cancel_request,
// mcp/message) and vendor methods are absent: their direction is found
// otherwise or not at all.
var methodDir = map[string]sdk.Direction{
	// Served by the agent.
	"initialize":                sdk.C2A,
	"authenticate":              sdk.C2A,
	"logout":                    sdk.C2A,
	"session/new":               sdk.C2A,
	"session/load":              sdk.C2A,
	"session/list":              sdk.C2A,
	"session/delete":            sdk.C2A,
	"session/resume":            sdk.C2A,
	"session/close":             sdk.C2A,
	"session/fork":              sdk.C2A,
	"session/set_mode":          sdk.C2A,
	"session/set_config_option": sdk.C2A,
	"session/prompt":            sdk.C2A,
	"session/cancel":            sdk.C2A,
	"providers/list":            sdk.C2A,
	"providers/set":             sdk.C2A,
	"providers/disable":         sdk.C2A,
	// Served by the client.
	"session/update":             sdk.A2C,
	"session/request_permission": sdk.A2C,
	"fs/read_text_file":          sdk.A2C,
	"fs/write_text_file":         sdk.A2C,
	"terminal/create":            sdk.A2C,
	"terminal/output":            sdk.A2C,
	"terminal/release":           sdk.A2C,
	"terminal/wait_for_exit":     sdk.A2C,
	"terminal/kill":              sdk.A2C,
	"elicitation/create":         sdk.A2C,
	"elicitation/complete":       sdk.A2C,
}

// cancelRequest is the protocol-level method either side may send; it
// travels the way the request it cancels did.
const cancelRequest = "$/cancel_request"

// resultKeys are result members that only responses travelling one way
// have (each is required in the result that has it), with that way: they
// settle a response whose id matches requests in both directions, or none.
var resultKeys = []struct {
	key string
	dir sdk.Direction
}{
	{"stopReason", sdk.A2C},      // session/prompt
	{"protocolVersion", sdk.A2C}, // initialize
	{"sessionId", sdk.A2C},       // session/new, session/fork
	{"outcome", sdk.C2A},         // session/request_permission
	{"terminalId", sdk.C2A},      // terminal/create
	{"truncated", sdk.C2A},       // terminal/output
}
