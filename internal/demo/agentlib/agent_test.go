package agentlib_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/internal/demo/agentlib"
	"github.com/acptap/acptap/internal/demo/clientlib"
	"github.com/acptap/acptap/internal/testpeers"
)

// serve runs the agent on p and closes its output when it returns.
func serve(t *testing.T, p *testpeers.Pipes, opts agentlib.Options) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		err := agentlib.ServeContext(context.Background(), p.AgentIn, p.AgentOut, opts)
		p.AgentOut.Close()
		done <- err
	}()
	return done
}

func fixedIDs() func() string {
	n := 0
	return func() string { n++; return fmt.Sprintf("sess-%d", n) }
}

func TestExampleClientAndAgentInProcess(t *testing.T) {
	for _, respondFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("respondFirst=%v", respondFirst), func(t *testing.T) {
			p := testpeers.CheckedPipes(t, testpeers.V2)
			done := serve(t, p, agentlib.Options{NewSessionID: fixedIDs(), RespondFirst: respondFirst})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			sum, err := clientlib.RunConn(ctx, p.ClientIn, p.ClientOut, clientlib.Options{Cwd: "/home/dev/hello"})
			if err != nil {
				t.Fatalf("RunConn: %v", err)
			}
			if err := <-done; err != nil {
				t.Fatalf("Serve: %v", err)
			}
			want := map[string]int{
				"user_message_chunk":  2,
				"state_update":        6, // running, requires_action, running, idle; running, idle
				"agent_thought_chunk": 3,
				"agent_message_chunk": 5,
				"plan_update":         3,
				"tool_call_update":    7,
				"usage_update":        2,
			}
			if fmt.Sprint(sum.Updates) != fmt.Sprint(want) {
				t.Errorf("updates = %v\nwant %v", sum.Updates, want)
			}
			if sum.SessionID != "sess-1" || sum.AgentInfo.Name != agentlib.Name || sum.ProtocolVersion != 2 {
				t.Errorf("summary = %+v", sum)
			}
			if strings.Join(sum.PromptMessageIDs, ",") != "user-1,user-2" || strings.Join(sum.StopReasons, ",") != "end_turn,end_turn" {
				t.Errorf("messageIds %v, stopReasons %v", sum.PromptMessageIDs, sum.StopReasons)
			}
			if strings.Join(sum.PermissionAnswers, ",") != "allow-once" || !sum.Closed {
				t.Errorf("permission answers %v, closed %v", sum.PermissionAnswers, sum.Closed)
			}
			counts := p.Checker.Counts()
			for _, k := range []string{
				"client initialize request", "agent initialize response",
				"client session/new request", "agent session/new response",
				"client session/prompt request", "agent session/prompt response",
				"agent session/request_permission request", "client session/request_permission response",
				"client session/close request", "agent session/close response",
			} {
				if counts[k] == 0 {
					t.Errorf("no %q checked; counts %v", k, counts)
				}
			}
			// The prompt response comes after the turn's idle update by
			// default, right after the user message echo with RespondFirst.
			var order []string
			for _, l := range p.Transcript() {
				switch {
				case strings.Contains(l.Line, `"result":{"messageId"`):
					order = append(order, "response")
				case strings.Contains(l.Line, `"state":"idle"`):
					order = append(order, "idle")
				}
			}
			wantOrder := "idle,response,idle,response"
			if respondFirst {
				wantOrder = "response,idle,response,idle"
			}
			if got := strings.Join(order, ","); got != wantOrder {
				t.Errorf("prompt response / idle order = %s, want %s", got, wantOrder)
			}
		})
	}
}

func TestPermissionAnswers(t *testing.T) {
	tests := []struct {
		permission  string
		stopReasons string
		editStatus  string
	}{
		{"allow_always", "end_turn,end_turn", "completed"},
		{"reject_once", "end_turn,end_turn", "failed"},
		{"cancel", "cancelled,end_turn", "cancelled"},
	}
	for _, tt := range tests {
		t.Run(tt.permission, func(t *testing.T) {
			p := testpeers.CheckedPipes(t, testpeers.V2)
			done := serve(t, p, agentlib.Options{})
			var editStatus string
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			sum, err := clientlib.RunConn(ctx, p.ClientIn, p.ClientOut, clientlib.Options{
				Cwd: "/home/dev/hello", Permission: tt.permission,
				OnUpdate: func(_ string, u json.RawMessage) {
					var tc struct {
						ToolCallID, Status string
					}
					if json.Unmarshal(u, &tc) == nil && tc.ToolCallID == "call_1_edit" && tc.Status != "" {
						editStatus = tc.Status
					}
				},
			})
			if err != nil {
				t.Fatalf("RunConn: %v", err)
			}
			<-done
			if got := strings.Join(sum.StopReasons, ","); got != tt.stopReasons {
				t.Errorf("stopReasons = %s, want %s", got, tt.stopReasons)
			}
			if editStatus != tt.editStatus {
				t.Errorf("final edit status = %q, want %q", editStatus, tt.editStatus)
			}
		})
	}
}

// rawClient drives the agent line by line.
type rawClient struct {
	t  *testing.T
	p  *testpeers.Pipes
	rd *bufio.Reader
}

func newRaw(t *testing.T, opts agentlib.Options) (*rawClient, <-chan error) {
	p := testpeers.CheckedPipes(t, testpeers.V2)
	done := serve(t, p, opts)
	return &rawClient{t: t, p: p, rd: bufio.NewReader(p.ClientIn)}, done
}

func (c *rawClient) send(line string) {
	c.t.Helper()
	if _, err := c.p.ClientOut.Write([]byte(line + "\n")); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// next reads the agent's next message.
func (c *rawClient) next() map[string]any {
	c.t.Helper()
	type res struct {
		line string
		err  error
	}
	ch := make(chan res, 1)
	go func() { l, err := c.rd.ReadString('\n'); ch <- res{l, err} }()
	select {
	case r := <-ch:
		if r.err != nil {
			c.t.Fatalf("read: %v", r.err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(r.line), &m); err != nil {
			c.t.Fatalf("agent wrote %q: %v", r.line, err)
		}
		return m
	case <-time.After(10 * time.Second):
		c.t.Fatal("timed out waiting for the agent")
		return nil
	}
}

// until reads messages until pred holds and returns them all.
func (c *rawClient) until(pred func(map[string]any) bool) []map[string]any {
	c.t.Helper()
	var seen []map[string]any
	for {
		m := c.next()
		seen = append(seen, m)
		if pred(m) {
			return seen
		}
	}
}

func isResponse(id float64) func(map[string]any) bool {
	return func(m map[string]any) bool { _, hasMethod := m["method"]; return !hasMethod && m["id"] == id }
}

func isRequest(method string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["method"] == method && m["id"] != nil }
}

func update(m map[string]any) map[string]any {
	if m["method"] != "session/update" {
		return nil
	}
	return m["params"].(map[string]any)["update"].(map[string]any)
}

func (c *rawClient) start() {
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"raw","version":"1"}}}`)
	c.until(isResponse(0))
	c.send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`)
	c.until(isResponse(1))
	c.send(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"fix it"}]}}`)
}

func TestCloseDuringPermission(t *testing.T) {
	c, done := newRaw(t, agentlib.Options{NewSessionID: func() string { return "s1" }})
	c.start()
	perm := c.until(isRequest("session/request_permission"))
	permID := perm[len(perm)-1]["id"]
	c.send(`{"jsonrpc":"2.0","id":3,"method":"session/close","params":{"sessionId":"s1"}}`)
	msgs := c.until(isResponse(3))
	var got []string
	for _, m := range msgs {
		switch {
		case m["method"] == "$/cancel_request":
			got = append(got, fmt.Sprintf("cancel_request:%v", m["params"].(map[string]any)["requestId"]))
		case update(m) != nil:
			u := update(m)
			got = append(got, fmt.Sprintf("%v:%v%v", u["sessionUpdate"], u["status"], u["stopReason"]))
		case isResponse(2)(m):
			got = append(got, "prompt-response:"+m["result"].(map[string]any)["messageId"].(string))
		case isResponse(3)(m):
			got = append(got, fmt.Sprintf("close-response:%v", m["result"]))
		}
	}
	want := fmt.Sprintf("cancel_request:%v tool_call_update:cancelled<nil> state_update:<nil>cancelled prompt-response:user-1 close-response:map[]", permID)
	if strings.Join(got, " ") != want {
		t.Errorf("after close:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	// A late answer to the withdrawn permission request is ignored; prompts
	// to the closed session fail.
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":{"outcome":{"outcome":"cancelled"}}}`, permID))
	c.send(`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"again"}]}}`)
	m := c.until(isResponse(4))
	if e, ok := m[len(m)-1]["error"].(map[string]any); !ok || e["code"] != float64(-32002) {
		t.Errorf("prompt after close: %v", m[len(m)-1])
	}
	c.p.ClientOut.Close()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

func TestSessionCancel(t *testing.T) {
	c, done := newRaw(t, agentlib.Options{NewSessionID: func() string { return "s1" }, Delay: 20 * time.Millisecond})
	c.start()
	c.until(func(m map[string]any) bool {
		u := update(m)
		return u != nil && u["sessionUpdate"] == "agent_thought_chunk"
	})
	c.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}`)
	msgs := c.until(isResponse(2))
	var stop any
	for _, m := range msgs {
		if u := update(m); u != nil && u["state"] == "idle" {
			stop = u["stopReason"]
		}
		if isRequest("session/request_permission")(m) {
			t.Error("permission requested after session/cancel")
		}
	}
	if stop != "cancelled" {
		t.Errorf("idle stopReason = %v, want cancelled", stop)
	}
	c.p.ClientOut.Close()
	<-done
}

func TestProtocolErrors(t *testing.T) {
	c, done := newRaw(t, agentlib.Options{NewSessionID: func() string { return "s1" }})
	// A batch (allowed by alpha.9): initialize and an unknown method.
	c.send(`[{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"raw","version":"1"}}},{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}]`)
	c.until(isResponse(0))
	m := c.until(isResponse(1))
	if e, ok := m[len(m)-1]["error"].(map[string]any); !ok || e["code"] != float64(-32601) {
		t.Errorf("unknown method: %v", m[len(m)-1])
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"relative/dir"}}`)
	m = c.until(isResponse(2))
	if e, ok := m[len(m)-1]["error"].(map[string]any); !ok || e["code"] != float64(-32602) {
		t.Errorf("relative cwd: %v", m[len(m)-1])
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"nope","prompt":[]}}`)
	m = c.until(isResponse(3))
	if e, ok := m[len(m)-1]["error"].(map[string]any); !ok || e["code"] != float64(-32002) {
		t.Errorf("unknown session: %v", m[len(m)-1])
	}
	c.p.ClientOut.Close()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// The agent stops at EOF even in the middle of a turn.
func TestEOFDuringTurn(t *testing.T) {
	c, done := newRaw(t, agentlib.Options{NewSessionID: func() string { return "s1" }})
	c.start()
	c.until(isRequest("session/request_permission"))
	c.p.ClientOut.Close()
	go func() { // keep reading so the agent can write its last updates
		for {
			if _, err := c.rd.ReadString('\n'); err != nil {
				return
			}
		}
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after EOF")
	}
}

// A prompt sent while a turn runs is queued; session/close ends the running
// turn and fails the queued prompt with -32800 (it was never inserted).
func TestQueuedPrompts(t *testing.T) {
	c, done := newRaw(t, agentlib.Options{NewSessionID: func() string { return "s1" }, Delay: 20 * time.Millisecond})
	c.start()
	perm := c.until(isRequest("session/request_permission"))
	permID := perm[len(perm)-1]["id"]
	c.send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"second"}]}}`)
	c.send(`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"third"}]}}`)
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":{"outcome":{"outcome":"selected","optionId":"allow-once"}}}`, permID))
	// Turn 1 ends, then turn 2 (user-2) starts.
	msgs := c.until(func(m map[string]any) bool {
		u := update(m)
		return u != nil && u["sessionUpdate"] == "user_message_chunk" && u["messageId"] == "user-2"
	})
	sawResp := false
	for _, m := range msgs {
		if isResponse(2)(m) {
			sawResp = true
		}
	}
	if !sawResp {
		t.Error("turn 2 started before turn 1 answered its prompt")
	}
	c.send(`{"jsonrpc":"2.0","id":5,"method":"session/close","params":{"sessionId":"s1"}}`)
	msgs = c.until(isResponse(5))
	var errCode any
	for _, m := range msgs {
		if isResponse(4)(m) {
			errCode = m["error"].(map[string]any)["code"]
		}
		if u := update(m); u != nil && u["messageId"] == "user-3" {
			t.Error("the queued third prompt was inserted after session/close")
		}
	}
	if errCode != float64(-32800) {
		t.Errorf("queued prompt after close: error code %v, want -32800", errCode)
	}
	c.p.ClientOut.Close()
	<-done
}
