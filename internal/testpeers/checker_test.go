package testpeers_test

import (
	"strings"
	"testing"

	"github.com/acptap/acptap/internal/testpeers"
)

func TestCheckerV2(t *testing.T) {
	type step struct {
		from    testpeers.Sender
		line    string
		wantErr string // "" = valid
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"initialize round trip", []step{
			{testpeers.Client, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"c","version":"1"}}}`, ""},
			{testpeers.Agent, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2,"info":{"name":"a","version":"1"}}}`, ""},
		}},
		{"initialize response without info", []step{
			{testpeers.Client, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"c","version":"1"}}}`, ""},
			{testpeers.Agent, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2}}`, "initialize response result"},
		}},
		{"ids are per direction", []step{
			{testpeers.Client, `{"jsonrpc":"2.0","id":0,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`, ""},
			{testpeers.Agent, `{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s","title":"t","options":[{"optionId":"o","name":"OK","kind":"allow_once"}]}}`, ""},
			{testpeers.Client, `{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"cancelled"}}}`, ""},
			{testpeers.Agent, `{"jsonrpc":"2.0","id":0,"result":{"messageId":"m"}}`, ""},
		}},
		{"response to unknown request", []step{
			{testpeers.Agent, `{"jsonrpc":"2.0","id":7,"result":{}}`, "unknown client request"},
		}},
		{"chunk without messageId", []step{
			{testpeers.Agent, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}`, "session/update notification params"},
		}},
		{"vendor update kind", []step{
			{testpeers.Agent, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"_vendor","x":1}}}`, ""},
		}},
		{"batch of notifications", []step{
			{testpeers.Agent, `[{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"running"}}},{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":1,"size":2}}}]`, ""},
		}},
		{"uint32 format is asserted", []step{
			{testpeers.Agent, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"terminal_update","terminalId":"t","exitStatus":{"exitCode":-1}}}}`, "session/update notification params"},
		}},
		{"extension method", []step{
			{testpeers.Client, `{"jsonrpc":"2.0","id":"x","method":"_vendor/thing","params":{"a":1}}`, ""},
			{testpeers.Agent, `{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"nope"}}`, ""},
		}},
		{"v1-only method", []step{
			{testpeers.Client, `{"jsonrpc":"2.0","id":1,"method":"session/load","params":{"sessionId":"s","cwd":"/","mcpServers":[]}}`, "not an ACP v2 method"},
		}},
		{"embedded newline", []step{
			{testpeers.Client, "{\"jsonrpc\":\"2.0\",\n\"method\":\"session/cancel\",\"params\":{\"sessionId\":\"s\"}}", "newline"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := testpeers.NewChecker(testpeers.V2)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range tt.steps {
				err := c.Check(s.from, []byte(s.line))
				switch {
				case s.wantErr == "" && err != nil:
					t.Errorf("step %d: unexpected error: %v", i, err)
				case s.wantErr != "" && err == nil:
					t.Errorf("step %d: no error, want one containing %q", i, s.wantErr)
				case s.wantErr != "" && !strings.Contains(err.Error(), s.wantErr):
					t.Errorf("step %d: error %q does not contain %q", i, err, s.wantErr)
				}
			}
		})
	}
}

func TestCheckerV1RejectsBatches(t *testing.T) {
	c, err := testpeers.NewChecker(testpeers.V1)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Check(testpeers.Agent, []byte(`[{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]}}}]`)); err == nil {
		t.Error("v1 batch accepted")
	}
	if err := c.Check(testpeers.Agent, []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]}}}`)); err != nil {
		t.Errorf("v1 plan rejected: %v", err)
	}
}
