package clientlib_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/internal/demo/agentlib"
	"github.com/acptap/acptap/internal/demo/clientlib"
	"github.com/acptap/acptap/internal/testpeers"
)

// The test binary doubles as the example agent, the way the demo re-executes
// the acptap binary.
const agentEnv = "CLIENTLIB_TEST_RUN_AGENT"

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

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestRunReExecutedAgent(t *testing.T) {
	sum, err := clientlib.Run(ctx(t), []string{os.Args[0]}, clientlib.Options{Env: []string{agentEnv + "=1"}, Cwd: t.TempDir()})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if sum.AgentInfo.Name != agentlib.Name || len(sum.PromptMessageIDs) != 2 || !sum.Closed {
		t.Errorf("summary = %+v", sum)
	}
	if sum.Updates["tool_call_update"] == 0 || sum.Requests["session/request_permission"] != 1 {
		t.Errorf("updates %v, requests %v", sum.Updates, sum.Requests)
	}
}

func TestRunConnInProcessValidated(t *testing.T) {
	p := testpeers.CheckedPipes(t, testpeers.V2)
	done := make(chan error, 1)
	go func() { done <- agentlib.Serve(p.AgentIn, p.AgentOut); p.AgentOut.Close() }()
	var order []string
	sum, err := clientlib.RunConn(ctx(t), p.ClientIn, p.ClientOut, clientlib.Options{
		Cwd:                   "/home/dev/hello",
		AdditionalDirectories: []string{"/home/dev/lib"},
		Prompts:               []string{"one", "two", "three"},
		OnUpdate: func(_ string, u json.RawMessage) {
			var h struct{ SessionUpdate string }
			_ = json.Unmarshal(u, &h)
			order = append(order, h.SessionUpdate)
		},
	})
	if err != nil {
		t.Fatalf("RunConn: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if got := strings.Join(sum.StopReasons, ","); got != "end_turn,end_turn,end_turn" {
		t.Errorf("stopReasons = %s", got)
	}
	if sum.TotalUpdates != len(order) || order[0] != "user_message_chunk" {
		t.Errorf("OnUpdate saw %d updates (first %q), summary %d", len(order), order[0], sum.TotalUpdates)
	}
	if sum.Requests["session/request_permission"] != 2 { // turns 1 and 3 edit
		t.Errorf("requests = %v", sum.Requests)
	}
	// The secrets went out in session/new, where a recorder must scrub them.
	var newSession string
	for _, l := range p.Transcript() {
		if strings.Contains(l.Line, `"method":"session/new"`) {
			newSession = l.Line
		}
	}
	for _, s := range clientlib.Secrets {
		if !strings.Contains(newSession, s) {
			t.Errorf("session/new does not carry %s: %s", s, newSession)
		}
	}
}

// fakeAgent answers the client's requests with canned results and, on
// session/prompt, plays the given agent lines (which may be batches or
// requests to the client) before the idle update and the prompt response.
func fakeAgent(t *testing.T, p *testpeers.Pipes, turn []string) {
	rd := bufio.NewReader(p.AgentIn)
	w := func(s string) {
		if _, err := p.AgentOut.Write([]byte(s + "\n")); err != nil {
			t.Errorf("fake agent write: %v", err)
		}
	}
	defer p.AgentOut.Close()
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal([]byte(line), &m)
		switch m.Method {
		case "initialize":
			w(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":2,"info":{"name":"fake","version":"0"}}}`, m.ID))
		case "session/new":
			w(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"sessionId":"f1"}}`, m.ID))
		case "session/prompt":
			w(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"messageId":"u1"}}`, m.ID))
			for _, l := range turn {
				w(l)
			}
			w(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"f1","update":{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}}}`)
		case "session/close":
			w(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID))
		}
	}
}

func TestBatchesElicitationAndUnknownRequests(t *testing.T) {
	p := testpeers.CheckedPipes(t, testpeers.V2)
	go fakeAgent(t, p, []string{
		`[{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"f1","update":{"sessionUpdate":"state_update","state":"running"}}},{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"f1","update":{"sessionUpdate":"agent_message_chunk","messageId":"a1","content":{"type":"text","text":"hi"}}}}]`,
		`{"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":{"sessionId":"f1","mode":"form","message":"Details?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"},"level":{"type":"string","enum":["low","high"]},"count":{"type":"integer","minimum":2},"ok":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string","enum":["a","b"]}}},"required":["name"]}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"_vendor/ping","params":{}}`,
	})
	sum, err := clientlib.RunConn(ctx(t), p.ClientIn, p.ClientOut, clientlib.Options{Prompts: []string{"go"}, Cwd: "/w"})
	if err != nil {
		t.Fatalf("RunConn: %v", err)
	}
	if sum.Updates["agent_message_chunk"] != 1 || sum.Updates["state_update"] != 2 {
		t.Errorf("batched updates not counted: %v", sum.Updates)
	}
	if sum.Requests["elicitation/create"] != 1 || sum.Requests["_vendor/ping"] != 1 {
		t.Errorf("requests = %v", sum.Requests)
	}
	var answer, unknown string
	for _, l := range p.Transcript() {
		if l.Dir == "send" && strings.Contains(l.Line, `"id":0,"result"`) {
			answer = l.Line
		}
		if l.Dir == "send" && strings.Contains(l.Line, `"id":1,"error"`) {
			unknown = l.Line
		}
	}
	want := `{"jsonrpc":"2.0","id":0,"result":{"action":"accept","content":{"count":2,"level":"low","name":"Fix the greeting (acptap example)","ok":true,"tags":["a"]}}}`
	if answer != want {
		t.Errorf("elicitation answer:\n got %s\nwant %s", answer, want)
	}
	if !strings.Contains(unknown, `-32601`) {
		t.Errorf("unknown agent request answered with %q", unknown)
	}
}

func TestRunErrors(t *testing.T) {
	if _, err := clientlib.Run(ctx(t), nil, clientlib.Options{}); err == nil {
		t.Error("Run with no command succeeded")
	}
	if _, err := clientlib.Run(ctx(t), []string{"/nonexistent/agent"}, clientlib.Options{}); err == nil {
		t.Error("Run with a missing command succeeded")
	}
	_, err := clientlib.Run(ctx(t), []string{"sh", "-c", "exit 0"}, clientlib.Options{Stderr: new(strings.Builder)})
	if err == nil {
		t.Error("Run against an agent that exits at once succeeded")
	}
}
