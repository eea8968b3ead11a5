package testpeers

import (
	"io"
	"sync"
	"testing"
)

// Pipes connects an in-process agent and client with two io.Pipes and checks
// every line each side writes against the official schema. The agent reads
// AgentIn and writes AgentOut; the client reads ClientIn and writes
// ClientOut. Close AgentOut when the agent has returned, and ClientOut when
// the client is done (RunConn-style clients close their writer themselves).
type Pipes struct {
	Checker   *Checker
	AgentIn   io.Reader
	AgentOut  io.WriteCloser
	ClientIn  io.Reader
	ClientOut io.WriteCloser

	mu         sync.Mutex
	transcript []TraceLine
}

// CheckedPipes returns connected Pipes whose traffic is validated against
// ACP version v; each invalid line is reported with t.Errorf.
func CheckedPipes(t testing.TB, v Version) *Pipes {
	t.Helper()
	c, err := NewChecker(v)
	if err != nil {
		t.Fatalf("load ACP v%d schema: %v", v, err)
	}
	p := &Pipes{Checker: c}
	c2aR, c2aW := io.Pipe()
	a2cR, a2cW := io.Pipe()
	p.AgentIn, p.ClientIn = c2aR, a2cR
	p.ClientOut = Tap(c2aW, p.checker(t, Client))
	p.AgentOut = Tap(a2cW, p.checker(t, Agent))
	t.Cleanup(func() {
		c2aW.Close()
		a2cW.Close()
		c2aR.Close()
		a2cR.Close()
	})
	return p
}

func (p *Pipes) checker(t testing.TB, from Sender) func([]byte) {
	dir := "send"
	if from == Agent {
		dir = "recv"
	}
	return func(line []byte) {
		p.mu.Lock()
		p.transcript = append(p.transcript, TraceLine{Dir: dir, Line: string(line)})
		p.mu.Unlock()
		if err := p.Checker.Check(from, line); err != nil {
			t.Errorf("%s sent a message that breaks the ACP v%d schema: %v\n%s", from, p.Checker.Version(), err, line)
		}
	}
}

// Transcript returns every line seen so far, in the order it was written,
// with Dir "send" for the client's lines and "recv" for the agent's (as in a
// client trace file).
func (p *Pipes) Transcript() []TraceLine {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]TraceLine(nil), p.transcript...)
}
