package testpeers_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/internal/demo/agentlib"
	"github.com/acptap/acptap/internal/demo/clientlib"
	"github.com/acptap/acptap/internal/testpeers"
)

// The test binary doubles as the Go example agent.
const agentEnv = "ACPTAP_TESTPEERS_EXAMPLE_AGENT"

func TestMain(m *testing.M) {
	if os.Getenv(agentEnv) == "1" {
		if err := agentlib.Serve(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func exampleAgentArgv(t *testing.T) []string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{"env", agentEnv + "=1", exe}
}

// The official SDK client (which validates everything it receives) talks to
// the Go example agent.
func TestSDKClientAgainstExampleAgent(t *testing.T) {
	res := testpeers.RunSDKClient(t, "v2-client.mjs", nil, exampleAgentArgv(t))
	res.RequireOK(t)
	s := res.Summary
	if s.AgentInfo == nil || s.AgentInfo.Name != agentlib.Name || s.Requests["session/request_permission"] != 1 {
		t.Errorf("summary = %+v", s)
	}
	if got := strings.Join(s.StopReasons, ","); got != "end_turn,end_turn" {
		t.Errorf("stopReasons = %s", got)
	}
	testpeers.CheckTrace(t, testpeers.V2, res.Trace)
}

// The Go example client talks to the SDK agent in "everything" mode: every
// update kind, a batch, a permission request and a form elicitation.
func TestExampleClientAgainstSDKAgent(t *testing.T) {
	p := testpeers.StartChecked(t, testpeers.V2, testpeers.NodeArgv(t, "v2-agent.mjs"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sum, err := clientlib.RunConn(ctx, p.Stdout, p.Stdin, clientlib.Options{Cwd: t.TempDir()})
	if err != nil {
		t.Fatalf("RunConn: %v", err)
	}
	if err := p.Wait(); err != nil {
		t.Errorf("agent exit: %v", err)
	}
	for _, k := range v2AllKinds {
		if sum.Updates[k] == 0 {
			t.Errorf("no %s update; got %v", k, sum.Updates)
		}
	}
	if sum.Requests["elicitation/create"] != 2 || sum.Requests["session/request_permission"] != 2 {
		t.Errorf("requests = %v", sum.Requests)
	}
	if got := strings.Join(sum.StopReasons, ","); got != "end_turn,end_turn" {
		t.Errorf("stopReasons = %s", got)
	}
	var batches int
	for _, l := range p.Transcript() {
		if strings.HasPrefix(l.Line, "[") {
			batches++
		}
	}
	if batches != 2 {
		t.Errorf("saw %d batches, want 2 (one per turn)", batches)
	}
}
