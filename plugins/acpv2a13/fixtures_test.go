package acpv2a13

import (
	"sort"
	"strings"
)

// Fixtures: alpha.13 wire traffic, one per addition of the draft. Each
// maps to testdata/<name>.golden.jsonl (TestGolden*), and all of them form
// the conformance corpus.

const opening = `c2a {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"Zed","version":"0.210.0"},"capabilities":{"auth":{"terminal":{}}}}}
a2c {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2,"info":{"name":"Claude Code","version":"3.0.0"},"capabilities":{"session":{"title":{},"archive":{},"status":{}},"auth":{"status":{}}}}}
c2a {"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w/proj","mcpServers":[]}}
a2c {"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}
`

func upd(kind, members string) string {
	return `a2c {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"` + kind + `"` + members + `}}}`
}

func fixture(lines ...string) string { return opening + strings.Join(lines, "\n") + "\n" }

var fixtures = map[string]string{
	// session/set_title → session_info.title: the title the agent stored
	// (its response), not the one asked for; a rejected title records
	// nothing.
	"set_title_session_info": fixture(
		`c2a {"jsonrpc":"2.0","id":2,"method":"session/set_title","params":{"sessionId":"s1","title":"  Fix the parser  "}}`,
		`a2c {"jsonrpc":"2.0","id":2,"result":{"title":"Fix the parser"}}`,
		`c2a {"jsonrpc":"2.0","id":3,"method":"session/set_title","params":{"sessionId":"s1","title":"   "}}`,
		`a2c {"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"empty title"}}`,
	),
	// state_update.background → the state record keeps the update (with
	// its snapshot of background work) in native.record.
	"background_state": fixture(
		upd("state_update", `,"state":"running","background":[{"type":"terminal","terminalId":"t1"},{"type":"tool_call","toolCallId":"c1","_meta":{"k":1}},{"type":"subagent","sessionId":"s2"},{"type":"_acme_job","id":"j1"}]`),
		upd("state_update", `,"state":"idle","stopReason":"end_turn","background":[{"type":"terminal","terminalId":"t1"}]`),
		upd("state_update", `,"state":"running"`),
		upd("state_update", `,"state":"idle","stopReason":"end_turn","background":[]`),
	),
	// tool_call/cancel: the request and its outcome are audit records,
	// the controls the call advertised a declared loss, the effect the
	// call's cancelled result.
	"tool_call_cancel": fixture(
		upd("tool_call_update", `,"toolCallId":"c1","name":"bash","title":"Run tests","kind":"execute","status":"in_progress","rawInput":{"cmd":"go test"},"capabilities":{"cancel":{}}`),
		`c2a {"jsonrpc":"2.0","id":2,"method":"tool_call/cancel","params":{"sessionId":"s1","toolCallId":"c1"}}`,
		`a2c {"jsonrpc":"2.0","id":2,"result":{}}`,
		upd("tool_call_update", `,"toolCallId":"c1","status":"cancelled","capabilities":null`),
		`c2a {"jsonrpc":"2.0","id":3,"method":"tool_call/cancel","params":{"sessionId":"s1","toolCallId":"c1"}}`,
		`a2c {"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"tool call already final"}}`,
	),
	// terminal_update.size → the terminal record's _org.acptap/size (patch
	// rule); terminal/cancel and its outcome are audit records.
	"terminal_cancel_size": fixture(
		upd("terminal_update", `,"terminalId":"t1","command":"npm run dev","cwd":"/w/proj","size":{"cols":120,"rows":40},"capabilities":{"cancel":{}}`),
		upd("terminal_update", `,"terminalId":"t1","size":{"cols":80,"rows":24}`),
		`c2a {"jsonrpc":"2.0","id":2,"method":"terminal/cancel","params":{"sessionId":"s1","terminalId":"t1"}}`,
		`a2c {"jsonrpc":"2.0","id":2,"result":{}}`,
		upd("terminal_update", `,"terminalId":"t1","exitStatus":{"exitCode":null,"signal":"SIGTERM"},"capabilities":null`),
	),
	// session/archive of the open session ends it as session/close does
	// (the draft: archiving an active session closes it), besides the
	// audit records; unarchive and an archive that fails are audit only.
	"archive_unarchive": fixture(
		`c2a {"jsonrpc":"2.0","id":2,"method":"session/archive","params":{"sessionId":"s1"}}`,
		`a2c {"jsonrpc":"2.0","id":2,"result":{}}`,
		`c2a {"jsonrpc":"2.0","id":3,"method":"session/unarchive","params":{"sessionId":"s1"}}`,
		`a2c {"jsonrpc":"2.0","id":3,"result":{}}`,
		`c2a {"jsonrpc":"2.0","id":4,"method":"session/archive","params":{"sessionId":"s1"}}`,
		`a2c {"jsonrpc":"2.0","id":4,"error":{"code":-32002,"message":"session not found"}}`,
	),
	// session/status: a snapshot, never a transition: audit records, no
	// state record.
	"session_status": fixture(
		`c2a {"jsonrpc":"2.0","id":2,"method":"session/status","params":{"sessionId":"s1"}}`,
		`a2c {"jsonrpc":"2.0","id":2,"result":{"status":"open","state":{"sessionUpdate":"state_update","state":"idle","background":[]}}}`,
	),
	// The AvailableCommand union: commands and _vendor kinds kept
	// verbatim in the audit record (ASR-710).
	"available_commands_union": fixture(
		upd("available_commands_update", `,"availableCommands":[{"type":"command","name":"review","description":"Review the diff","input":{"type":"text","hint":"files"}},{"type":"_acme_macro","name":"deploy","description":"Deploy","steps":["build","push"],"_meta":{"acme":true}}]`),
	),
	// session_message with senderMessageId (incoming view) → the message's
	// from._org.acptap/messageId; chunks carry no session ids; the
	// outgoing view (recipientMessageId) is the sender's audit record.
	"session_message_ids": fixture(
		`c2a {"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w/proj","mcpServers":[]}}`,
		`a2c {"jsonrpc":"2.0","id":2,"result":{"sessionId":"s2"}}`,
		`a2c {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s2","update":{"sessionUpdate":"session_message","messageId":"out1","senderSessionId":"s2","recipientSessionId":"s1","content":[{"type":"text","text":"Status?"}]}}}`,
		upd("session_message", `,"messageId":"in1","senderSessionId":"s2","recipientSessionId":"s1"`),
		upd("session_message_chunk", `,"messageId":"in1","content":{"type":"text","text":"Status?"}`),
		upd("session_message", `,"messageId":"in1","senderMessageId":"out1"`),
		`a2c {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s2","update":{"sessionUpdate":"session_message","messageId":"out1","recipientMessageId":"in1"}}}`,
		upd("state_update", `,"state":"idle","stopReason":"end_turn"`),
	),
	// subagent_update.cwd and .additionalDirectories → the workspace roots
	// of the child's stream, opened after it (ASR-711, ASR-721).
	"subagent_roots": fixture(
		upd("subagent_update", `,"sessionId":"s3","title":"Explore","cwd":"/w/proj/sub","additionalDirectories":["/w/lib"]`),
		`a2c {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s3","update":{"sessionUpdate":"agent_message","messageId":"a1","content":[{"type":"text","text":"Exploring."}]}}}`,
	),
	// session_message_chunks before any upsert of their message (the draft
	// allows it): held, then the receiving side's message gets them before
	// the upsert's patch; the sending side's are audit records, as is a
	// chunk whose message no upsert names before the connection ends.
	"session_message_chunks_first": fixture(
		`c2a {"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w/proj","mcpServers":[]}}`,
		`a2c {"jsonrpc":"2.0","id":2,"result":{"sessionId":"s2"}}`,
		upd("session_message_chunk", `,"messageId":"in1","content":{"type":"text","text":"Sta"}`),
		`a2c {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s2","update":{"sessionUpdate":"session_message_chunk","messageId":"out1","content":{"type":"text","text":"Sta"}}}}`,
		upd("agent_message", `,"messageId":"a1","content":[{"type":"text","text":"Meanwhile."}]`),
		upd("session_message_chunk", `,"messageId":"in1","content":{"type":"text","text":"tus?"}`),
		`a2c {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s2","update":{"sessionUpdate":"session_message","messageId":"out1","senderSessionId":"s2","recipientSessionId":"s1","recipientMessageId":"in1"}}}`,
		upd("session_message", `,"messageId":"in1","senderSessionId":"s2","recipientSessionId":"s1","senderMessageId":"out1"`),
		upd("session_message_chunk", `,"messageId":"lost1","content":{"type":"text","text":"never named"}`),
		upd("state_update", `,"state":"idle","stopReason":"end_turn"`),
	),
	// The permission outcome cancelled of its own → decision cancelled
	// (ASR-716).
	"permission_cancelled": fixture(
		`a2c {"jsonrpc":"2.0","id":10,"method":"session/request_permission","params":{"sessionId":"s1","title":"Edit a.go?","toolCall":{"toolCallId":"c1","title":"Edit a.go"},"options":[{"optionId":"yes","name":"Allow","kind":"allow_once"}]}}`,
		`c2a {"jsonrpc":"2.0","id":10,"result":{"outcome":{"outcome":"cancelled"}}}`,
	),
	// auth/status and auth/status_update: connection-level, no session:
	// nothing recorded, no diagnostic.
	"auth_status": fixture(
		`c2a {"jsonrpc":"2.0","id":2,"method":"auth/status","params":{}}`,
		`a2c {"jsonrpc":"2.0","id":2,"result":{"state":"authenticated","accounts":[{"label":"me@example.com","active":true}]}}`,
		`a2c {"jsonrpc":"2.0","method":"auth/status_update","params":{"state":"unauthenticated"}}`,
		upd("state_update", `,"state":"idle","stopReason":"end_turn"`),
	),
	// A frame alpha.9 accepts but alpha.13 does not (a command without its
	// type) is declared nonconforming; the draft's own frames are not.
	"nonconforming_alpha9_shape": fixture(
		upd("available_commands_update", `,"availableCommands":[{"name":"review","description":"Review"}]`),
	),
}

func sortedNames(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
