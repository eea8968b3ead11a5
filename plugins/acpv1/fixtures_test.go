package acpv1

import (
	"fmt"
	"sort"
)

// Fixtures: ACP v1 wire traffic, one per v1 update kind or client method
// and one per declared loss. Each maps to testdata/<name>.golden.jsonl
// (TestGolden*), and all of them form the conformance corpus.

func permReq(id int, call string) string {
	return fmt.Sprintf(`a2c {"jsonrpc":"2.0","id":%d,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":%q,"title":"Edit a.go"},"options":[{"optionId":"yes","name":"Allow","kind":"allow_once"},{"optionId":"no","name":"Reject","kind":"reject_once"}]}}`, id, call)
}

func agentReq(id int, method, params string) string {
	return fmt.Sprintf(`a2c {"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
}

func clientResult(id int, result string) string {
	return fmt.Sprintf(`c2a {"jsonrpc":"2.0","id":%d,"result":%s}`, id, result)
}

func clientError(id int) string {
	return fmt.Sprintf(`c2a {"jsonrpc":"2.0","id":%d,"error":{"code":-32002,"message":"not found"}}`, id)
}

func text(s string) string { return fmt.Sprintf(`{"type":"text","text":%q}`, s) }

func chunk(kind, messageID, content string) string {
	id := ""
	if messageID != "" {
		id = fmt.Sprintf(`,"messageId":%q`, messageID)
	}
	return upd(fmt.Sprintf(`{"sessionUpdate":%q%s,"content":%s}`, kind, id, content))
}

const (
	thought = "agent_thought_chunk"
	said    = "agent_message_chunk"
	user    = "user_message_chunk"
)

// kindFixtures exercise each ACP v1 update kind and client method.
var kindFixtures = map[string]string{
	// A new message starts when the chunk kind changes, when the messageId
	// changes and when a turn ends; a chunk without an id continues the
	// message of its kind, across other updates.
	"chunk_message_ids": opened(
		prompt(2, "fix the greeting"),
		chunk(thought, "", text("The user wants ")),
		chunk(thought, "", text("a fix.")),
		chunk(said, "", text("I'll edit ")),
		upd(`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Read a.go","kind":"read","status":"completed","rawOutput":{"ok":true}}`),
		chunk(said, "", text("a.go.")),
		chunk(said, "m-native", text("Native id. ")),
		chunk(said, "", text("Still native.")),
		chunk(said, "m-other", text("Another message.")),
		answer(2, "end_turn"),
		prompt(3, "thanks"),
		chunk(said, "", text("You're welcome.")),
		answer(3, "end_turn"),
	),
	// The prompt is a user message with a derived id (v1's response has no
	// messageId); the response's stopReason ends the turn as an idle state.
	// An echo of the prompt joins it; an error after updates ends the turn
	// with stopReason error; an error before any update withdraws the
	// prompt.
	"prompt_turns": opened(
		`c2a {"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"look at this"},{"type":"resource_link","name":"a.go","uri":"file:///w/proj/a.go"}]}}`,
		chunk(user, "", text("look at this")),
		chunk(user, "", `{"type":"resource_link","name":"a.go","uri":"file:///w/proj/a.go"}`),
		chunk(said, "", text("Looked.")),
		answer(2, "end_turn"),
		prompt(3, "stop"),
		chunk(said, "", text("Stopping")),
		`c2a {"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}`,
		answer(3, "cancelled"),
		prompt(4, "crash"),
		chunk(said, "", text("Oh no")),
		`a2c {"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"internal error"}}`,
		prompt(5, "refused"),
		`a2c {"jsonrpc":"2.0","id":5,"error":{"code":-32000,"message":"authentication required"}}`,
		prompt(6, "after the refusal"),
		chunk(said, "", text("Fine.")),
		answer(6, "max_tokens"),
	),
	// tool_call (a creation) and tool_call_update fold into one call.
	"tool_call_fold": opened(
		prompt(2, "edit"),
		upd(`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Edit a.go","kind":"edit","status":"pending","rawInput":{"path":"/w/proj/a.go"},"locations":[{"path":"/w/proj/a.go","line":5}]}`),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"in_progress","title":"Editing a.go"}`),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","content":[{"type":"content","content":{"type":"text","text":"Edited."}}],"rawOutput":{"lines":1}}`),
		upd(`{"sessionUpdate":"tool_call","toolCallId":"t2","title":"Run","kind":"execute","status":"in_progress"}`),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t2","status":"failed","rawOutput":{"error":"exit 1"}}`),
		upd(`{"sessionUpdate":"tool_call","toolCallId":"t3","title":"Never finished","status":"pending"}`),
		answer(2, "end_turn"),
	),
	// v1 diffs become file_change with the operation inferred (no oldText:
	// add) and the full texts in the change's _meta.
	"diff_file_change": opened(
		prompt(2, "write files"),
		upd(`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Write","kind":"edit","status":"pending"}`),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","content":[{"type":"diff","path":"/w/proj/new.go","newText":"package x\n"},{"type":"diff","path":"/w/proj/a.go","oldText":"old\n","newText":"new\n"},{"type":"diff","path":"/w/lib/b.go","oldText":null,"newText":"b\n"},{"type":"diff","path":"/elsewhere/c.go","oldText":"","newText":"c\n"}]}`),
		upd(`{"sessionUpdate":"tool_call","toolCallId":"t2","title":"Proposed","kind":"edit","status":"pending","content":[{"type":"diff","path":"/w/proj/p.go","oldText":"p\n","newText":"q\n"}]}`),
		answer(2, "end_turn"),
	),
	// plan (no id) is the session's one plan: each update replaces it.
	"plan_snapshots": opened(
		prompt(2, "plan it"),
		upd(`{"sessionUpdate":"plan","entries":[{"content":"Edit","priority":"high","status":"pending"},{"content":"Test","priority":"medium","status":"pending"}]}`),
		upd(`{"sessionUpdate":"plan","entries":[{"content":"Edit","priority":"high","status":"completed"},{"content":"Test","priority":"medium","status":"in_progress"}],"_meta":{"step":2}}`),
		answer(2, "end_turn"),
		prompt(3, "finish"),
		upd(`{"sessionUpdate":"plan","entries":[{"content":"Edit","priority":"high","status":"completed"},{"content":"Test","priority":"medium","status":"completed"}]}`),
		answer(3, "end_turn"),
	),
	// current_mode_update is a config_change with the mode; a mode the
	// client set (session/set_mode) is one too, unless the agent reported
	// it already.
	"mode_changes": opened(
		upd(`{"sessionUpdate":"current_mode_update","currentModeId":"ask"}`),
		`c2a {"jsonrpc":"2.0","id":2,"method":"session/set_mode","params":{"sessionId":"s1","modeId":"code"}}`,
		`a2c {"jsonrpc":"2.0","id":2,"result":{}}`,
		`c2a {"jsonrpc":"2.0","id":3,"method":"session/set_mode","params":{"sessionId":"s1","modeId":"ask"}}`,
		upd(`{"sessionUpdate":"current_mode_update","currentModeId":"ask"}`),
		`a2c {"jsonrpc":"2.0","id":3,"result":{}}`,
		`c2a {"jsonrpc":"2.0","id":4,"method":"session/set_mode","params":{"sessionId":"s1","modeId":"yolo"}}`,
		`a2c {"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"no such mode"}}`,
	),
	// Client-side terminals: terminal/create, terminal/output and
	// terminal/wait_for_exit responses become the terminal's snapshots;
	// env is not recorded.
	"client_terminals": opened(
		prompt(2, "test"),
		agentReq(0, "terminal/create", `{"sessionId":"s1","command":"go","args":["test","-run","Test A","./..."],"env":[{"name":"TOKEN","value":"SECRET-ENV"}],"cwd":"/w/proj/sub","outputByteLimit":1024}`),
		clientResult(0, `{"terminalId":"term-1"}`),
		upd(`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"go test","kind":"execute","status":"in_progress","content":[{"type":"terminal","terminalId":"term-1"}]}`),
		agentReq(1, "terminal/output", `{"sessionId":"s1","terminalId":"term-1"}`),
		clientResult(1, `{"output":"=== RUN\n","truncated":false}`),
		agentReq(2, "terminal/wait_for_exit", `{"sessionId":"s1","terminalId":"term-1"}`),
		clientResult(2, `{"exitCode":1,"signal":null}`),
		agentReq(3, "terminal/output", `{"sessionId":"s1","terminalId":"term-1"}`),
		clientResult(3, `{"output":"…FAIL\n","truncated":true,"exitStatus":{"exitCode":1}}`),
		agentReq(4, "terminal/release", `{"sessionId":"s1","terminalId":"term-1"}`),
		clientResult(4, `{}`),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"failed"}`),
		agentReq(5, "terminal/create", `{"sessionId":"s1","command":"sleep 100"}`),
		clientResult(5, `{"terminalId":"term-2"}`),
		agentReq(6, "terminal/kill", `{"sessionId":"s1","terminalId":"term-2"}`),
		clientResult(6, `{}`),
		agentReq(7, "terminal/wait_for_exit", `{"sessionId":"s1","terminalId":"term-2"}`),
		clientResult(7, `{"exitCode":null,"signal":"SIGKILL"}`),
		agentReq(8, "terminal/create", `{"sessionId":"s1","command":"nope"}`),
		clientError(8),
		answer(2, "end_turn"),
	),
	// fs/* traffic is audit-only: each request and response, verbatim.
	"fs_audit": opened(
		prompt(2, "read"),
		agentReq(0, "fs/read_text_file", `{"sessionId":"s1","path":"/w/proj/a.go","line":1,"limit":10}`),
		clientResult(0, `{"content":"package a\n"}`),
		agentReq(1, "fs/write_text_file", `{"sessionId":"s1","path":"/w/proj/a.go","content":"package b\n"}`),
		clientResult(1, `null`),
		agentReq(2, "fs/read_text_file", `{"sessionId":"s1","path":"/w/proj/missing.go"}`),
		clientError(2),
		answer(2, "end_turn"),
	),
	// v1 permission requests carry the tool call at params.toolCall: the
	// permission's subject is {callId}, its requestId <n>:<id> (ASR-716).
	"permissions": opened(
		prompt(2, "edit"),
		upd(`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Edit a.go","kind":"edit","status":"pending"}`),
		permReq(0, "t1"),
		clientResult(0, `{"outcome":{"outcome":"selected","optionId":"yes"}}`),
		permReq(1, "t2"),
		clientResult(1, `{"outcome":{"outcome":"cancelled"}}`),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed"}`),
		answer(2, "end_turn"),
	),
	// agentInfo (optional in v1) gives agent.name through the registry
	// (ASR-703); the other updates v1 shares with v2 map as in v2.
	"shared_updates": opened(
		prompt(2, "everything else"),
		upd(`{"sessionUpdate":"config_option_update","configOptions":[{"id":"model","name":"Model","category":"model","type":"select","currentValue":"large","options":[{"value":"large","name":"Large"}]}]}`),
		upd(`{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"review","description":"Review","input":{"hint":"what"}}]}`),
		upd(`{"sessionUpdate":"session_info_update","title":"Greeting","updatedAt":"2026-11-01T12:00:00Z"}`),
		upd(`{"sessionUpdate":"usage_update","used":1200,"size":200000,"cost":{"amount":0.01,"currency":"USD"}}`),
		upd(`{"sessionUpdate":"notice","severity":"warning","title":"Context is getting long"}`),
		upd(`{"sessionUpdate":"compaction_update","compactionId":"c1","status":"in_progress"}`),
		upd(`{"sessionUpdate":"compaction_summary_chunk","compactionId":"c1","content":{"type":"text","text":"Fixed."}}`),
		upd(`{"sessionUpdate":"compaction_update","compactionId":"c1","status":"completed"}`),
		agentReq(0, "elicitation/create", `{"sessionId":"s1","mode":"form","message":"Commit message?","requestedSchema":{"type":"object","properties":{"m":{"type":"string"}}}}`),
		clientResult(0, `{"action":"accept","content":{"m":"fix"}}`),
		upd(`{"sessionUpdate":"_vendor_progress","pct":50}`),
		answer(2, "end_turn"),
		`c2a {"jsonrpc":"2.0","id":9,"method":"session/close","params":{"sessionId":"s1"}}`,
		`a2c {"jsonrpc":"2.0","id":9,"result":{}}`,
	),
	// session/load replays the history (prompts as user chunks with the
	// agent's ids, thoughts without ids): like a v2 resume with replay,
	// nothing already recorded is recorded again (ASR-717); a replayed
	// message whose content differs supersedes; the next prompt's id
	// continues after the history.
	"load_replay": opened(
		prompt(2, "hello"),
		chunk(thought, "", text("Greet.")),
		chunk(said, "a-1", text("Hi!")),
		upd(`{"sessionUpdate":"plan","entries":[{"content":"Greet","priority":"high","status":"completed"}]}`),
		answer(2, "end_turn"),
		`c2a {"jsonrpc":"2.0","id":3,"method":"session/load","params":{"sessionId":"s1","cwd":"/w/proj","mcpServers":[]}}`,
		chunk(user, "u-1", text("hello")),
		chunk(thought, "", text("Greet.")),
		chunk(said, "a-1", text("Hi! (edited)")),
		upd(`{"sessionUpdate":"plan","entries":[{"content":"Greet","priority":"high","status":"completed"}]}`),
		`a2c {"jsonrpc":"2.0","id":3,"result":{"modes":{"currentModeId":"code","availableModes":[]}}}`,
		prompt(4, "again"),
		chunk(said, "", text("Again.")),
		answer(4, "end_turn"),
	),
}

// lossFixtures show where each ACP v1 loss category starts to apply.
var lossFixtures = map[string]string{
	// Always: no state_update in v1 (the header has it even for a session
	// with no turn).
	"loss_v1_turn_state": opened(),
	// Declared at the first derived id (here the prompt's).
	"loss_v1_message_boundaries": opened(
		chunk(said, "m1", text("native ids only: no loss yet")),
		prompt(2, "now a derived id"),
		answer(2, "end_turn"),
	),
	// Declared at the first v1 diff.
	"loss_v1_diff_operations": opened(
		upd(`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Delete a.go","kind":"delete","status":"completed","content":[{"type":"diff","path":"/w/proj/a.go","oldText":"a\n","newText":""}]}`),
	),
	// Declared at the first client-side terminal.
	"loss_v1_terminal_output": opened(
		agentReq(0, "terminal/create", `{"sessionId":"s1","command":"make"}`),
		clientResult(0, `{"terminalId":"term-1"}`),
		agentReq(1, "terminal/output", `{"sessionId":"s1","terminalId":"term-1"}`),
		clientResult(1, `{"output":"tail only","truncated":true}`),
	),
}

func sortedNames(m map[string]string) []string {
	var names []string
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
