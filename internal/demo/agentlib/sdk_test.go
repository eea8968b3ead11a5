package agentlib_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/internal/demo/agentlib"
	"github.com/acptap/acptap/internal/demo/clientlib"
	"github.com/acptap/acptap/internal/testpeers"
)

// TestSDKClientsNegotiate: the example agent negotiates the version the
// client asks for, so both generations of the official SDK drive it: the
// v1 client gets ACP v1 (protocolVersion 1, v1 shapes, stop reasons in the
// prompt responses) and the v2 client ACP v2; every line both ways conforms
// to that version's official schema (v1: the stable schema of SDK 2.4.0).
func TestSDKClientsNegotiate(t *testing.T) {
	testpeers.NodeSDKDir(t)
	bin, err := testpeers.Build(t.TempDir(), "./examples/agent")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		client  string
		version testpeers.Version
		proto   int
		updates []string
	}{
		{"v1-client.mjs", testpeers.V1, 1, []string{"tool_call", "tool_call_update", "plan", "agent_message_chunk", "agent_thought_chunk", "usage_update"}},
		{"v2-client.mjs", testpeers.V2, 2, []string{"state_update", "tool_call_update", "plan_update", "agent_message_chunk", "user_message_chunk"}},
	} {
		t.Run(c.client, func(t *testing.T) {
			res := testpeers.RunSDKClient(t, c.client, []string{"--strict"}, []string{bin, "-quiet"})
			res.RequireOK(t)
			s := res.Summary
			if s.ProtocolVersion != c.proto || s.AgentInfo == nil || s.AgentInfo.Name != "acptap-example-agent" {
				t.Errorf("negotiated %d with %+v, want %d", s.ProtocolVersion, s.AgentInfo, c.proto)
			}
			for _, u := range c.updates {
				if s.Updates[u] == 0 {
					t.Errorf("no %s update; updates %v", u, s.Updates)
				}
			}
			if len(s.StopReasons) != 2 || s.StopReasons[0] != "end_turn" {
				t.Errorf("stop reasons %v", s.StopReasons)
			}
			if len(s.PermissionAnswers) != 1 {
				t.Errorf("permission answers %s", s.PermissionAnswers)
			}
			chk := testpeers.CheckTrace(t, c.version, res.Trace)
			if chk.Counts()["agent session/prompt response"] != 2 {
				t.Errorf("checked %v", chk.Counts())
			}
		})
	}
}

// TestExampleClientV1InProcess: the example client asking for ACP v1 gets
// it from the example agent; every line both ways conforms to the stable
// v1 schema (SDK 2.4.0); the turns end at the prompt responses.
func TestExampleClientV1InProcess(t *testing.T) {
	p := testpeers.CheckedPipes(t, testpeers.V1)
	done := serve(t, p, agentlib.Options{NewSessionID: fixedIDs()})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sum, err := clientlib.RunConn(ctx, p.ClientIn, p.ClientOut, clientlib.Options{Cwd: "/home/dev/hello", ProtocolVersion: 1})
	if err != nil {
		t.Fatalf("RunConn: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if sum.ProtocolVersion != 1 || sum.AgentInfo.Name != agentlib.Name || strings.Join(sum.StopReasons, ",") != "end_turn,end_turn" {
		t.Errorf("summary %+v", sum)
	}
	if sum.Updates["tool_call"] != 3 || sum.Updates["plan"] != 3 || sum.Updates["state_update"] != 0 || len(sum.PermissionAnswers) != 1 || !sum.Closed {
		t.Errorf("updates %v, permissions %v, closed %v", sum.Updates, sum.PermissionAnswers, sum.Closed)
	}
}
