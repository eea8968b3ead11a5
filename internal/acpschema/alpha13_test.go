package acpschema

import "testing"

// TestV2Alpha13 checks the newer v2 draft's additions: frames it defines
// conform to V2Alpha13; its new methods are unknown to alpha.9 (V2), while
// new members of known shapes pass alpha.9 too (its objects are open).
func TestV2Alpha13(t *testing.T) {
	frames := []struct {
		from   Sender
		line   string
		alpha9 bool // alpha.9 accepts it as well
	}{
		{Client, `{"jsonrpc":"2.0","id":1,"method":"session/set_title","params":{"sessionId":"s1","title":"T"}}`, false},
		{Client, `{"jsonrpc":"2.0","id":2,"method":"tool_call/cancel","params":{"sessionId":"s1","toolCallId":"c1"}}`, false},
		{Client, `{"jsonrpc":"2.0","id":3,"method":"session/archive","params":{"sessionId":"s1"}}`, false},
		{Agent, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn","background":[{"type":"terminal","terminalId":"t1"}]}}}`, true},
		{Agent, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"terminal_update","terminalId":"t1","size":{"cols":80,"rows":24},"capabilities":{"cancel":{}}}}}`, true},
	}
	for _, f := range frames {
		c13, err := NewChecker(V2Alpha13)
		if err != nil {
			t.Fatal(err)
		}
		c13.SetTolerant(true)
		if err := c13.Check(f.from, []byte(f.line)); err != nil {
			t.Errorf("alpha.13 rejects %s: %v", f.line, err)
		}
		c9, _ := NewChecker(V2)
		c9.SetTolerant(true)
		if err := c9.Check(f.from, []byte(f.line)); (err == nil) != f.alpha9 {
			t.Errorf("alpha.9 on %s: %v", f.line, err)
		}
	}
	// The command union: a command without its type conforms to alpha.9 only.
	untyped := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"x","description":"d"}]}}}`
	c13, _ := NewChecker(V2Alpha13)
	c9, _ := NewChecker(V2)
	if c13.Check(Agent, []byte(untyped)) == nil || c9.Check(Agent, []byte(untyped)) != nil {
		t.Error("an untyped available command: alpha.13 must reject it, alpha.9 accept it")
	}
	if V2Alpha13.Protocol() != 2 || V2.Protocol() != 2 || V1.Protocol() != 1 {
		t.Error("Protocol")
	}
}
