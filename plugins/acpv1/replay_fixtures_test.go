package acpv1

// v1ReplayFixtures are ASR streams, one per record type (and per case of
// it the v1 translation treats apart), for the golden tests of the replay
// to ACP v1 (TestReplayV1Golden). Each is a header and records given
// without seq and id (mkStream numbers them r1, r2, …).
var v1ReplayFixtures = map[string][]string{
	"message_user": {
		`{"type":"message","messageId":"u1","role":"user","origin":"prompt","content":[{"type":"text","text":"Fix x.go"},{"type":"resource_link","name":"x.go","uri":"file:///w/proj/x.go"}],"_meta":{"acme.dev/k":1}}`,
	},
	"message_agent": {
		`{"type":"message","messageId":"m1","role":"assistant","content":[{"type":"text","text":"Done."}]}`,
		`{"type":"message","messageId":"m2","role":"assistant","content":[{"type":"text","text":"One, "},{"type":"text","text":"two."}]}`,
	},
	"message_reasoning": {
		`{"type":"message","messageId":"th1","role":"assistant","content":[{"type":"reasoning","text":"Think first."}]}`,
		`{"type":"message","messageId":"m1","role":"assistant","content":[{"type":"reasoning","summary":["A","B"]},{"type":"text","text":"Answer"},{"type":"reasoning","opaque":"eA=="}]}`,
	},
	"message_refusal": {
		`{"type":"message","messageId":"m1","role":"assistant","content":[{"type":"refusal","text":"I will not."}]}`,
	},
	"message_vendor_block": {
		`{"type":"message","messageId":"m1","role":"assistant","content":[{"type":"_acme_card","data":1},{"type":"text","text":"kept"}]}`,
		`{"type":"message","messageId":"m2","role":"assistant","content":[{"type":"_acme_card","data":2}]}`,
	},
	"message_notice": {
		`{"type":"message","messageId":"notice:0:1","idSource":"derived","origin":"notice","author":"harness","audience":"user","severity":"warning","content":[{"type":"text","text":"Rate limited"}]}`,
	},
	"tool_call_completed": {
		`{"type":"tool_call","callId":"c1","name":"read_file","title":"Read x.go","kind":"read","input":{"path":"x.go"},"locations":[{"path":{"root":"root0","path":"x.go"},"line":3}],"_meta":{"acme.dev/step":1}}`,
		`{"type":"tool_result","callId":"c1","status":"completed","displayContent":[{"type":"text","text":"package x"}],"raw":{"bytes":9}}`,
	},
	"tool_call_pending": {
		`{"type":"tool_call","callId":"c1","name":"shell","title":"ls","kind":"execute","input":{"command":"ls"}}`,
	},
	"tool_call_statuses": {
		`{"type":"tool_call","callId":"c1","name":"a","title":"failed","kind":"other"}`,
		`{"type":"tool_result","callId":"c1","status":"failed","content":[{"type":"text","text":"ENOENT"}]}`,
		`{"type":"tool_call","callId":"c2","name":"b","title":"denied","kind":"other"}`,
		`{"type":"tool_result","callId":"c2","status":"denied"}`,
		`{"type":"tool_call","callId":"c3","name":"c","title":"interrupted","kind":"other"}`,
		`{"type":"tool_result","callId":"c3","status":"interrupted","displayContent":[{"type":"text","text":"stopped"}]}`,
		`{"type":"tool_call","callId":"c4","name":"d","title":"unknown","kind":"other"}`,
		`{"type":"tool_result","callId":"c4","status":"unknown","raw":{"x":1}}`,
		`{"type":"tool_call","callId":"c5","name":"e","title":"vendor","kind":"_acme_kind"}`,
		`{"type":"tool_result","callId":"c5","status":"_acme_paused","displayContent":[{"type":"text","text":"paused"}]}`,
	},
	"tool_call_terminal": {
		`{"type":"tool_call","callId":"c1","name":"shell","title":"go test","kind":"execute","input":{"command":"go test"}}`,
		`{"type":"tool_result","callId":"c1","status":"completed","exec":{"terminalId":"t1"}}`,
		`{"type":"terminal","status":"exited","terminalId":"t1","command":"go test","cwd":{"root":"root0","path":""},"exitCode":0,"output":{"blob":{"encoding":"base64","data":"b2sK"}}}`,
	},
	"file_change_v1_texts": {
		`{"type":"tool_call","callId":"c1","name":"edit","title":"Edit x.go","kind":"edit"}`,
		`{"type":"file_change","status":"applied","cause":{"callId":"c1"},"changes":[{"op":"modify","path":{"root":"root0","path":"x.go"},"_meta":{"org.acptap/oldText":"a\n","org.acptap/newText":"b\n"}}],"precision":"unknown"}`,
		`{"type":"file_change","status":"applied","cause":{"callId":"c1"},"changes":[{"op":"add","path":{"root":"root0","path":"new.go"},"_meta":{"org.acptap/newText":"package x\n","acme.dev/tag":"t"}}],"precision":"unknown"}`,
		`{"type":"tool_result","callId":"c1","status":"completed"}`,
	},
	"file_change_patch_only": {
		`{"type":"tool_call","callId":"c1","name":"edit","title":"Edit x.go","kind":"edit"}`,
		`{"type":"file_change","status":"applied","cause":{"callId":"c1"},"changes":[{"op":"modify","path":{"root":"root0","path":"x.go"},"fileType":"text"}],"patch":{"format":"git_patch","text":"-a\n+b\n"},"precision":"hunks"}`,
		`{"type":"file_change","status":"applied","cause":{"callId":"c1"},"changes":[{"op":"delete","path":{"root":"root0","path":"old.go"},"_meta":{"org.acptap/oldText":"x"}}],"precision":"unknown"}`,
		`{"type":"tool_result","callId":"c1","status":"completed"}`,
	},
	"plan": {
		`{"type":"plan","planId":"plan","planType":"items","entries":[{"content":"Fix","priority":"high","status":"in_progress"}],"_meta":{"acme.dev/plan":1}}`,
		`{"type":"plan","planId":"plan","planType":"items","supersedes":"r1","entries":[{"content":"Fix","priority":"high","status":"completed"}]}`,
	},
	"plan_v2_only": {
		`{"type":"plan","planId":"p1","planType":"items","entries":[{"content":"A","priority":"_acme_urgent","status":"cancelled"}]}`,
		`{"type":"plan","planId":"p2","planType":"_acme_graph","entries":[]}`,
	},
	"compaction": {
		`{"type":"compaction","status":"completed","compactionId":"cmp1","kind":"summary","summary":[{"type":"text","text":"Fixed x.go"}]}`,
	},
	"terminal": {
		`{"type":"terminal","status":"running","terminalId":"t1","command":"tail -f log"}`,
	},
	"session_info": {
		`{"type":"session_info","title":"First"}`,
		`{"type":"session_info","title":"Fix x.go"}`,
	},
	"usage_summary": {
		`{"type":"usage_summary","scope":"session","cumulative":true,"includesChildren":null,"contextWindow":{"used":1000,"size":200000},"cost":{"amount":0.5,"currency":"USD"}}`,
	},
	"state": {
		`{"type":"state","state":"running"}`,
		`{"type":"state","state":"idle","stopReason":"end_turn"}`,
	},
	"config_change_mode": {
		`{"type":"config_change","mode":"ask"}`,
		`{"type":"config_change","mode":"code"}`,
		`{"type":"config_change","options":[{"configId":"model","name":"Model","type":"select","currentValue":"m","options":[{"value":"m","name":"M"}]}]}`,
	},
	"available_commands": {
		`{"type":"org.agent-session.acp/available_commands_update","native":{"record":{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"old","description":"earlier"}]}}}`,
		`{"type":"org.agent-session.acp/available_commands_update","native":{"record":{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"test","description":"Run the tests"}]}}}`,
	},
	"permission_input_request": {
		`{"type":"tool_call","callId":"c1","name":"shell","title":"rm","kind":"execute"}`,
		`{"type":"permission","status":"resolved","requestId":"0:0","idSource":"derived","options":[{"optionId":"ok","name":"Allow","kind":"allow_once"}],"subject":{"callId":"c1"},"decision":"allow_once"}`,
		`{"type":"input_request","status":"answered","requestId":"0:1","idSource":"derived","mode":"form","message":"Branch?","requestedSchema":{"type":"object","properties":{"b":{"type":"string"}}},"response":{"b":"main"}}`,
	},
	"not_replayed": {
		`{"type":"inference","model":"m"}`,
		`{"type":"declaration","lossy":["reasoning"]}`,
		`{"type":"subagent","childSession":"kid"}`,
		`{"type":"org.agent-session.acp/fs_read_text_file","native":{"record":{"method":"fs/read_text_file"}}}`,
		`{"type":"x_custom"}`,
	},
}

const v1FixtureHeader = `{"type":"header","asr":"0.1","sessionId":"s1","producer":{"method":"recorder","name":"test","lossy":[]},"workspace":{"roots":[{"id":"root0","path":"/w/proj"}]}}`
