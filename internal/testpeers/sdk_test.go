package testpeers_test

import (
	"strings"
	"testing"

	"github.com/acptap/acptap/internal/testpeers"
)

// Every session/update kind of ACP v2 alpha.9: the 23 named variants plus a
// vendor one. v2-agent.mjs in "everything" mode sends all of them.
var v2AllKinds = []string{
	"user_message_chunk", "user_message", "agent_message_chunk", "agent_message",
	"agent_thought_chunk", "agent_thought", "state_update", "tool_call_content_chunk",
	"tool_call_update", "terminal_update", "terminal_output_chunk", "plan_update",
	"plan_removed", "available_commands_update", "config_option_update",
	"session_info_update", "usage_update", "notice", "compaction_update",
	"compaction_summary_chunk", "subagent_update", "session_message",
	"session_message_chunk", "_acptap_test_vendor",
}

func TestNodeSDKV2Everything(t *testing.T) {
	res := testpeers.RunSDKClient(t, "v2-client.mjs", nil, testpeers.NodeArgv(t, "v2-agent.mjs"))
	res.RequireOK(t)
	s := res.Summary
	if s.ProtocolVersion != 2 || s.AgentInfo == nil || s.AgentInfo.Name != "acptap-sdk-v2-agent" {
		t.Errorf("initialize: protocolVersion=%d agentInfo=%+v", s.ProtocolVersion, s.AgentInfo)
	}
	if s.SessionID == "" || len(s.PromptMessageIDs) != 2 {
		t.Errorf("sessionId=%q promptMessageIds=%v", s.SessionID, s.PromptMessageIDs)
	}
	for _, k := range v2AllKinds {
		if s.Updates[k] == 0 {
			t.Errorf("no %s update received; got %v", k, s.Updates)
		}
	}
	if got := strings.Join(s.StopReasons, ","); got != "end_turn,end_turn" {
		t.Errorf("stopReasons = %s", got)
	}
	if s.Requests["session/request_permission"] != 1 || s.Requests["elicitation/create"] != 1 {
		t.Errorf("agent requests = %v", s.Requests)
	}
	if s.Wire.BatchesReceived != 1 {
		t.Errorf("batches received = %d, want 1", s.Wire.BatchesReceived)
	}
	c := testpeers.CheckTrace(t, testpeers.V2, res.Trace)
	if n := c.Counts()["agent session/update notification"]; n != s.TotalUpdates {
		t.Errorf("schema checker saw %d session/update notifications, client counted %d", n, s.TotalUpdates)
	}
}

func TestNodeSDKV2Basic(t *testing.T) {
	res := testpeers.RunSDKClient(t, "v2-client.mjs", []string{"--mode", "basic", "--no-mcp"}, testpeers.NodeArgv(t, "v2-agent.mjs"))
	res.RequireOK(t)
	want := map[string]int{"user_message_chunk": 3, "state_update": 4, "agent_message_chunk": 4}
	for k, n := range want {
		if res.Summary.Updates[k] != n {
			t.Errorf("%s: got %d, want %d (all: %v)", k, res.Summary.Updates[k], n, res.Summary.Updates)
		}
	}
	if len(res.Summary.Updates) != len(want) {
		t.Errorf("unexpected update kinds: %v", res.Summary.Updates)
	}
	testpeers.CheckTrace(t, testpeers.V2, res.Trace)
}

func TestNodeSDKV2ResumeAndConfig(t *testing.T) {
	res := testpeers.RunSDKClient(t, "v2-client.mjs",
		[]string{"--resume", "--set-config", "mode=ask", "--set-config", "auto_approve=true", "--permission", "reject_once", "--elicitation", "decline"},
		testpeers.NodeArgv(t, "v2-agent.mjs", "--no-batch"))
	res.RequireOK(t)
	if res.Summary.Wire.BatchesReceived != 0 {
		t.Errorf("--no-batch agent sent %d batches", res.Summary.Wire.BatchesReceived)
	}
	testpeers.CheckTrace(t, testpeers.V2, res.Trace)
}

// The SDK client drops and reports an update that breaks the schema; the
// schema checker must flag the same line.
func TestNodeSDKV2InvalidIsReported(t *testing.T) {
	res := testpeers.RunSDKClient(t, "v2-client.mjs", []string{"--mode", "invalid"}, testpeers.NodeArgv(t, "v2-agent.mjs"))
	if res.ExitCode != 0 || !res.Summary.OK {
		t.Fatalf("exit %d, summary %+v\n%s", res.ExitCode, res.Summary, res.Stderr)
	}
	if len(res.Summary.ValidationErrors) != 1 {
		t.Fatalf("validationErrors = %s, want exactly 1", res.Summary.ValidationErrors)
	}
	c, err := testpeers.NewChecker(testpeers.V2)
	if err != nil {
		t.Fatal(err)
	}
	var bad int
	for _, l := range testpeers.ReadTrace(t, res.Trace) {
		from := testpeers.Client
		if l.Dir == "recv" {
			from = testpeers.Agent
		}
		if c.Check(from, []byte(l.Line)) != nil {
			bad++
		}
	}
	if bad != 1 {
		t.Errorf("schema checker rejected %d lines, want 1", bad)
	}
}

func TestNodeSDKV1Everything(t *testing.T) {
	res := testpeers.RunSDKClient(t, "v1-client.mjs", []string{"--load", "--set-mode", "ask"}, testpeers.NodeArgv(t, "v1-agent.mjs"))
	res.RequireOK(t)
	s := res.Summary
	if s.ProtocolVersion != 1 || s.AgentInfo == nil || s.AgentInfo.Name != "acptap-sdk-v1-agent" {
		t.Errorf("initialize: protocolVersion=%d agentInfo=%+v", s.ProtocolVersion, s.AgentInfo)
	}
	for _, k := range []string{
		"agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan",
		"current_mode_update", "available_commands_update", "config_option_update",
		"session_info_update", "usage_update", "notice", "compaction_update",
		"compaction_summary_chunk", "user_message_chunk", // the last from session/load replay
	} {
		if s.Updates[k] == 0 {
			t.Errorf("no %s update received; got %v", k, s.Updates)
		}
	}
	for _, m := range []string{
		"session/request_permission", "fs/read_text_file", "fs/write_text_file", "terminal/create",
		"terminal/output", "terminal/wait_for_exit", "terminal/release", "elicitation/create",
	} {
		if s.Requests[m] != 1 {
			t.Errorf("%s requests = %d, want 1 (all: %v)", m, s.Requests[m], s.Requests)
		}
	}
	if got := strings.Join(s.StopReasons, ","); got != "end_turn,end_turn" {
		t.Errorf("stopReasons = %s", got)
	}
	testpeers.CheckTrace(t, testpeers.V1, res.Trace)
}

func TestNodeSDKV1Basic(t *testing.T) {
	res := testpeers.RunSDKClient(t, "v1-client.mjs", []string{"--mode", "basic", "--no-fs", "--no-terminal"}, testpeers.NodeArgv(t, "v1-agent.mjs"))
	res.RequireOK(t)
	if res.Summary.Updates["agent_message_chunk"] != 4 || len(res.Summary.Updates) != 1 {
		t.Errorf("updates = %v", res.Summary.Updates)
	}
	testpeers.CheckTrace(t, testpeers.V1, res.Trace)
}
